import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { defaultProviders } from './providers-file.js';
import { ConfigError, type Env } from './env.js';

/** A model id clients may send, and the providers that serve it (a fallback chain in this order). */
export interface ServedModel {
  id: string;
  providers: string[];
}

/**
 * The model ids of the providers file (GATEWAY_CONFIG), or of the built-in default without one,
 * for the control plane, which offers them when a project's allow-list is edited. Only names are
 * read: credentials are not expanded, so the control plane needs none of the providers' secrets,
 * and the full validation stays with the proxy, which refuses to start on a bad file.
 */
export function loadServedModels(env: Env): ServedModel[] {
  const path = env.GATEWAY_CONFIG;
  if (path === undefined || path === '') return servedModelsOf(defaultProviders(env).providers.map((p) => ({ name: p.name, models: p.models.map((m) => m.id) })));
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`GATEWAY_CONFIG: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  return parseServedModels(text, path);
}

export function parseServedModels(text: string, source: string): ServedModel[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    throw new ConfigError(`${source}: not valid YAML`);
  }
  const list = typeof doc === 'object' && doc !== null ? (doc as { providers?: unknown }).providers : undefined;
  if (!Array.isArray(list)) throw new ConfigError(`${source}: expected a top-level "providers:" list`);
  return servedModelsOf(
    list.map((entry, i) => {
      const e = (typeof entry === 'object' && entry !== null ? entry : {}) as { name?: unknown; models?: unknown };
      if (typeof e.name !== 'string' || !Array.isArray(e.models)) throw new ConfigError(`${source}: providers[${i}] needs a "name" and a "models" list`);
      const models = e.models.map((m: unknown) => (typeof m === 'string' ? m : typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : undefined));
      if (models.some((m) => typeof m !== 'string' || m === '')) throw new ConfigError(`${source}: providers[${i}] (${e.name}) has a model without an id`);
      return { name: e.name, models: models as string[] };
    }),
  );
}

/** One entry per model id, in order of first mention. */
function servedModelsOf(providers: { name: string; models: string[] }[]): ServedModel[] {
  const byId = new Map<string, ServedModel>();
  for (const provider of providers) {
    for (const id of provider.models) {
      const entry = byId.get(id) ?? { id, providers: [] };
      if (!entry.providers.includes(provider.name)) entry.providers.push(provider.name);
      byId.set(id, entry);
    }
  }
  return [...byId.values()];
}

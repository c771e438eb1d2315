import { Errors, type ModelEntry, type ProvidersConfig, type RouteConfig } from '@gateway/shared';
import type { NativeProtocol, ProviderAdapter } from '../providers/adapter.js';
import type { ParamTable } from '../conversion/param-support.js';
import { createAdapter } from '../providers/registry.js';
import { TargetHealth } from './target-health.js';
import { unknownModel } from './model-suggest.js';
import type { ProviderLog } from './provider-log.js';

/**
 * Model id → the providers that serve it, built once at start. An id listed by several providers
 * is a fallback chain in the order the providers file lists them, unless `routes:` makes it a
 * weighted route (the first target drawn by weight, the others kept as fallbacks). Providers in a
 * cooldown (target-health.ts) are tried last.
 */
export interface Target {
  adapter: ProviderAdapter;
  entry: ModelEntry;
  health: TargetHealth;
  /** The inbound protocols this target is sent as they came (ProviderAdapter.speaksNatively), read once. */
  native: ReadonlySet<NativeProtocol>;
  /** What the target's translation carries, drops and refuses (ProviderAdapter.paramsFor); null: every field goes. */
  params: ParamTable | null;
}

const NATIVE_PROTOCOLS: readonly NativeProtocol[] = ['anthropic-messages', 'openai-responses'];

function targetOf(adapter: ProviderAdapter, entry: ModelEntry, health: TargetHealth): Target {
  const native = new Set(NATIVE_PROTOCOLS.filter((p) => adapter.speaksNatively?.(p, entry) === true));
  return { adapter, entry, health, native, params: adapter.paramsFor?.(entry) ?? null };
}

/** Told which providers of a plan were in a cooldown (the audit event names those not tried). */
export interface CoolingLog {
  cooling(provider: string): void;
}

export class Route {
  /** How many targets one client request may try. */
  readonly attempts: number;
  /** Protocols every target of the route is sent as they came (`ProviderAdapter.speaksNatively`). */
  private readonly nativeProtocols = new Map<NativeProtocol, boolean>();
  /** Some target translates the internal request for its provider (Target.params): its parameters are judged at admission. */
  readonly translates: boolean;
  private readonly weights: number[] | null;
  private readonly totalWeight: number;

  constructor(
    readonly id: string,
    readonly targets: readonly Target[],
    config: RouteConfig | undefined,
  ) {
    this.attempts = Math.min(config?.attempts ?? targets.length, Math.max(targets.length, 1));
    this.weights = config?.strategy === 'weighted' && config.weights !== null ? targets.map((t) => config.weights?.[t.adapter.name] ?? 0) : null;
    this.totalWeight = this.weights?.reduce((a, b) => a + b, 0) ?? 0;
    this.translates = targets.some((t) => t.params !== null);
  }

  /**
   * Whether every target of the route takes a request of `protocol` as it came: then a body the
   * translation could not carry still goes (the provider judges it), whichever target is drawn.
   */
  nativeFor(protocol: NativeProtocol): boolean {
    let native = this.nativeProtocols.get(protocol);
    if (native === undefined) {
      native = this.targets.length > 0 && this.targets.every((t) => t.native.has(protocol));
      this.nativeProtocols.set(protocol, native);
    }
    return native;
  }

  /**
   * The targets to try for one request, in order: at most `attempts`. The common case (one
   * provider, healthy) allocates nothing.
   */
  plan(now: number, random: () => number = Math.random, log?: CoolingLog): readonly Target[] {
    const targets = this.targets;
    if (targets.length === 1) {
      // A lone provider is tried whatever its health: there is nothing else to answer with.
      targets[0]!.health.available(now);
      return targets;
    }
    const order = this.weights === null ? [...targets] : this.weightedOrder(random);
    const ready: Target[] = [];
    const cooling: Target[] = [];
    for (const target of order) (target.health.available(now) ? ready : cooling).push(target);
    if (log !== undefined) for (const target of cooling) log.cooling(target.adapter.name);
    const all = ready.concat(cooling);
    return all.length > this.attempts ? all.slice(0, this.attempts) : all;
  }

  /** One target drawn by weight first, then the rest by descending weight (file order on ties). */
  private weightedOrder(random: () => number): Target[] {
    const weights = this.weights as number[];
    let draw = random() * this.totalWeight;
    let first = weights.length - 1;
    for (let i = 0; i < weights.length; i++) {
      draw -= weights[i]!;
      if (draw < 0 && weights[i]! > 0) {
        first = i;
        break;
      }
    }
    const rest = this.targets.map((t, i) => ({ t, w: weights[i]!, i })).filter((x) => x.i !== first);
    rest.sort((a, b) => b.w - a.w || a.i - b.i);
    return [this.targets[first]!, ...rest.map((x) => x.t)];
  }
}

/** The id a provider is sent for a target's model: the entry's, or for a wildcard entry (`claude-*`) the asked id under its `upstream` prefix. */
export function upstreamOf(entry: ModelEntry, model: string): string {
  if (!entry.id.endsWith('*')) return entry.upstream;
  return entry.upstream.slice(0, -1) + model.slice(entry.id.length - 1);
}

export class ModelRouter {
  private readonly routes = new Map<string, Route>();
  /** Wildcard ids (`claude-*`), longest prefix first: a model with no exact id takes the first that matches. */
  private readonly wildcards: { prefix: string; id: string }[] = [];
  /**
   * The same routes restricted to providers with embeddings (same order, weights and health);
   * null for a model none of whose providers has them.
   */
  private readonly embeddingRoutes = new Map<string, Route | null>();
  readonly adapters: readonly ProviderAdapter[];
  /** Each provider entry by its name, for what a record names (a kept response's provider, a batch's). */
  private readonly adaptersByName: ReadonlyMap<string, ProviderAdapter>;
  /** Health per provider (all its models share one: a provider outage is rarely per model). */
  readonly health = new Map<string, TargetHealth>();
  /** GET /v1/models body, serialised once. */
  readonly modelsList: string;

  constructor(config: ProvidersConfig, providerLog: ProviderLog | null = null) {
    this.adapters = config.providers.map((p) => createAdapter(p));
    this.adaptersByName = new Map(this.adapters.map((adapter) => [adapter.name, adapter]));
    const byModel = new Map<string, Target[]>();
    for (const adapter of this.adapters) {
      const name = adapter.name;
      const events = providerLog === null ? null : { failed: (code: string, ms: number | null) => providerLog.failed(name, code, ms), recovered: () => providerLog.recovered(name) };
      const health = new TargetHealth(config.cooldown, events);
      this.health.set(adapter.name, health);
      for (const entry of adapter.models) {
        let list = byModel.get(entry.id);
        if (list === undefined) byModel.set(entry.id, (list = []));
        list.push(targetOf(adapter, entry, health));
      }
    }
    for (const [id, targets] of byModel) {
      this.routes.set(id, new Route(id, targets, config.routes[id]));
      const embedding = targets.filter((t) => t.adapter.embed !== undefined);
      this.embeddingRoutes.set(id, embedding.length === 0 ? null : embedding.length === targets.length ? (this.routes.get(id) as Route) : new Route(id, embedding, config.routes[id]));
    }
    for (const id of this.routes.keys()) if (id.endsWith('*')) this.wildcards.push({ prefix: id.slice(0, -1), id });
    this.wildcards.sort((a, b) => b.prefix.length - a.prefix.length);
    this.modelsList = this.listOf(null);
  }

  /** The route id serving a model: its own, else the longest wildcard whose prefix it has. */
  private idOf(model: string): string {
    if (this.routes.has(model) || this.wildcards.length === 0) return model;
    for (const w of this.wildcards) if (model.length > w.prefix.length && model.startsWith(w.prefix)) return w.id;
    return model;
  }

  /** The models list restricted to a project's allow-list (serialised per call: allow-lists are rare). */
  modelsListFor(allowed: readonly string[] | null): string {
    return allowed === null ? this.modelsList : this.listOf(allowed);
  }

  private listOf(allowed: readonly string[] | null): string {
    const data = [];
    for (const [id, route] of this.routes) {
      // A wildcard names no model a client could pick from a list.
      if (id.endsWith('*') || (allowed !== null && !allowed.includes(id))) continue;
      data.push({ id, object: 'model', created: 0, owned_by: route.targets[0]!.adapter.name });
    }
    return JSON.stringify({ object: 'list', data });
  }

  route(model: string): Route {
    const route = this.routes.get(this.idOf(model));
    if (route === undefined) throw unknownModel(model, this.routes.keys());
    return route;
  }

  /** The route of an embeddings request: only the model's providers that have embeddings. */
  embeddingsRoute(model: string): Route {
    const route = this.embeddingRoutes.get(this.idOf(model));
    if (route === undefined) return this.route(model);
    if (route === null) throw Errors.modelHasNoEmbeddings(model);
    return route;
  }
  /** The provider entry of this name, if the providers file still has it. */
  adapterNamed(name: string): ProviderAdapter | undefined {
    return this.adaptersByName.get(name);
  }


  async close(): Promise<void> {
    await Promise.allSettled(this.adapters.map((a) => a.close()));
  }
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The gateway's three roles as a deployment sees them — the entry point that starts each, the
 * ports it listens on, what it cannot run without — and the facts the deployment files are
 * checked against, read from the code and the README rather than restated: port defaults from
 * the service configuration, the paths each listener routes, the documented variables.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

export type Role = 'proxy' | 'control-plane' | 'writer' | 'migrate';

/** The image runs one role per entry point (deploy/docker/Dockerfile). */
const ENTRY_POINTS: Record<string, Role> = {
  'proxy/dist/main.js': 'proxy',
  'control-plane/dist/main.js': 'control-plane',
  'control-plane/dist/writer-main.js': 'writer',
  'control-plane/dist/migrate-main.js': 'migrate',
};

export function entryPoints(): Record<string, Role> {
  return { ...ENTRY_POINTS };
}

/** Each role's HTTP listeners: the variable naming the port, and the file that routes its requests. */
export const LISTENERS: Record<Role, readonly { variable: string; source: string }[]> = {
  proxy: [
    { variable: 'PROXY_PORT', source: 'proxy/src/http/server.ts' },
    { variable: 'METRICS_PORT', source: 'shared/src/metrics-server.ts' },
  ],
  'control-plane': [
    { variable: 'CONTROL_PORT', source: 'control-plane/src/http/routes/health.ts' },
    { variable: 'CONTROL_METRICS_PORT', source: 'shared/src/metrics-server.ts' },
  ],
  writer: [{ variable: 'WRITER_PORT', source: 'shared/src/metrics-server.ts' }],
  migrate: [],
};

/** Variables a role cannot run without once it is spread over several machines. */
export const REQUIRED: Record<Role, readonly string[]> = {
  proxy: ['REDIS_URL', 'INTERNAL_TOKEN', 'CONTROL_PLANE_URL', 'GATEWAY_CONFIG', 'PROXY_WORKERS', 'DRAIN_TIMEOUT_MS'],
  'control-plane': ['DATABASE_URL', 'REDIS_URL', 'JWT_SECRET', 'INTERNAL_TOKEN'],
  writer: ['DATABASE_URL', 'REDIS_URL'],
  migrate: ['DATABASE_URL'],
};

/** Credentials a role must not be given: the proxy never touches PostgreSQL or signs tokens. */
export const FORBIDDEN: Record<Role, readonly string[]> = {
  proxy: ['DATABASE_URL', 'JWT_SECRET', 'JWT_PREVIOUS_SECRETS', 'ADMIN_PASSWORD'],
  'control-plane': [],
  writer: ['JWT_SECRET', 'JWT_PREVIOUS_SECRETS', 'ADMIN_PASSWORD', 'INTERNAL_TOKEN'],
  migrate: ['JWT_SECRET', 'JWT_PREVIOUS_SECRETS', 'ADMIN_PASSWORD', 'INTERNAL_TOKEN'],
};

/** After SIGTERM a process drains for DRAIN_TIMEOUT_MS (10 s unless set), then flushes its records. */
export const DEFAULT_DRAIN_MS = 10_000;
export const FLUSH_MARGIN_MS = 5_000;
/** The writer finishes the batches in hand for up to this long (start-writer.ts close()). */
export const WRITER_CLOSE_MS = 10_000;

/** The role a command line starts, if it starts one. */
export function roleOfCommand(argv: readonly string[]): Role | null {
  for (const arg of argv) if (arg in ENTRY_POINTS) return ENTRY_POINTS[arg] as Role;
  return null;
}

/** Port defaults as the service configuration reads them: `envPort(env, 'PROXY_PORT', 8080)`. */
export function portDefaults(): Map<string, number> {
  const source = readFileSync(join(ROOT, 'shared/src/config/service-config.ts'), 'utf8');
  return new Map([...source.matchAll(/envPort\(env, '([A-Z_]+)', (\d+)\)/g)].map((m) => [m[1] as string, Number(m[2])]));
}

/** The port a listener opens, given the variables the process gets. */
export function listenerPort(variable: string, vars: ReadonlyMap<string, string | undefined>): number {
  return Number(vars.get(variable) ?? portDefaults().get(variable));
}

/** Whether a listener's source routes a path. */
export function serves(source: string, path: string): boolean {
  return new RegExp(`['"\`]${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"\`]`).test(readFileSync(join(ROOT, source), 'utf8'));
}

/** The variables of the README's configuration table. */
export function documentedVariables(readme = readFileSync(join(ROOT, 'README.md'), 'utf8')): Set<string> {
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? '';
  return new Set([...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1] as string));
}

/** `${VAR}` references of a providers file. */
export function providerFileVariables(text: string): Set<string> {
  return new Set([...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)\}/g)].map((m) => m[1] as string));
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseProvidersFile } from '@gateway/shared';
import { PROVIDER_TYPES } from '../../proxy/src/providers/registry.js';
import {
  DEFAULT_DRAIN_MS,
  documentedVariables,
  entryPoints,
  FLUSH_MARGIN_MS,
  FORBIDDEN,
  LISTENERS,
  listenerPort,
  providerFileVariables,
  REQUIRED,
  roleOfCommand,
  serves,
  WRITER_CLOSE_MS,
  type Role,
} from '../roles.js';

/**
 * The image and the compose stack, read as files: no Docker engine runs here, and the compose
 * plugin may be absent, so the compose file is parsed (merge keys and all) and held to what the
 * services need — the same checks as the Kubernetes manifests, where they apply.
 */
const DIR = fileURLToPath(new URL('.', import.meta.url));
const ROOT = join(DIR, '../..');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  stop_grace_period?: string;
  read_only?: boolean;
}

const compose = parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const gateway = services.flatMap(([name, s]) => {
  const role = roleOfCommand(s.command ?? []);
  return role === null ? [] : [{ name, service: s, role, env: new Map(Object.entries(s.environment ?? {})) }];
});
const byRole = (role: Role) => gateway.filter((g) => g.role === role);

function seconds(duration: string | undefined): number {
  const m = /^(\d+)(s|m)$/.exec(duration ?? '10s');
  if (!m) throw new Error(`unreadable duration ${String(duration)}`);
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
}

describe('the image', () => {
  const dockerfile = readFileSync(join(DIR, 'Dockerfile'), 'utf8');

  it('starts each role from an entry point the build makes', () => {
    for (const entry of Object.keys(entryPoints())) {
      expect(existsSync(join(ROOT, entry.replace('/dist/', '/src/').replace(/\.js$/, '.ts'))), entry).toBe(true);
      expect(dockerfile).toContain(entry);
    }
    expect(dockerfile).toMatch(/^CMD \["node", "proxy\/dist\/main\.js"\]$/m);
  });

  it('runs the current Node LTS on Debian 13 as an unprivileged user, with production dependencies only', () => {
    // The newer uWebSockets.js build needs glibc 2.38 or newer: Debian 13 (trixie), not 12.
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-trixie-slim$/m);
    expect(dockerfile).toContain('node_modules/@btc-vision/uwebsockets.js');
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\} AS runtime$/m);
  });

  it('is built from the sources alone: .dockerignore keeps out what the host built or installed', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git', '.env', '**/.env']));
  });
});

describe('the compose stack', () => {
  it('runs Redis, PostgreSQL, a control plane, a writer and two proxies behind a load balancer', () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['redis', 'postgres', 'lb']));
    expect(byRole('control-plane')).toHaveLength(1);
    expect(byRole('writer')).toHaveLength(1);
    expect(byRole('proxy')).toHaveLength(2);
    expect(byRole('migrate')).toHaveLength(1);
    for (const g of gateway) expect(g.service.build?.dockerfile, g.name).toBe('deploy/docker/Dockerfile');
    expect(new Set(gateway.map((g) => g.service.image)).size).toBe(1);
  });

  it('gives each role the variables it needs, only variables the gateway reads, and no credential it does not use', () => {
    const providers = readFileSync(join(DIR, 'providers.yaml'), 'utf8');
    const known = new Set([...documentedVariables(), ...providerFileVariables(providers)]);
    const problems = gateway.flatMap(({ name, role, env }) => [
      ...[...env.keys()].filter((v) => !known.has(v)).map((v) => `${name}: ${v} is not a variable the gateway reads`),
      ...REQUIRED[role].filter((v) => !env.has(v)).map((v) => `${name}: the ${role} needs ${v}`),
      ...FORBIDDEN[role].filter((v) => env.has(v)).map((v) => `${name}: the ${role} must not be given ${v}`),
    ]);
    expect(problems).toEqual([]);
  });

  it('takes every secret from the environment of `docker compose`, never from the file', () => {
    for (const g of gateway) {
      for (const name of ['JWT_SECRET', 'INTERNAL_TOKEN', 'DATABASE_URL', 'ADMIN_PASSWORD']) {
        const value = g.env.get(name);
        if (value !== undefined) expect(value, `${g.name} ${name}`).toMatch(/\$\{[A-Z_]+:?[-?]/);
      }
    }
  });

  it('checks readiness of every role on /readyz, at the port the role listens on', () => {
    for (const { name, role, service, env } of gateway.filter((g) => g.role !== 'migrate')) {
      const test = (service.healthcheck?.test ?? []).join(' ');
      const url = /http:\/\/127\.0\.0\.1:(\d+)(\/\w+)/.exec(test);
      expect(url, `${name} healthcheck`).not.toBeNull();
      const listener = LISTENERS[role].find((l) => listenerPort(l.variable, env) === Number(url?.[1]));
      expect(listener, `${name}: port ${url?.[1]}`).toBeDefined();
      expect(url?.[2]).toBe('/readyz');
      expect(serves(listener?.source as string, '/readyz')).toBe(true);
    }
  });

  it('starts each service after what it needs, and gives the drain time before a kill', () => {
    for (const [name, s] of services) {
      for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(compose.services), `${name} depends on ${dep}`).toContain(dep);
    }
    for (const g of [...byRole('control-plane'), ...byRole('writer')]) expect(g.service.depends_on?.migrate?.condition).toBe('service_completed_successfully');
    for (const g of byRole('proxy')) expect(g.service.depends_on?.['control-plane']?.condition).toBe('service_healthy');
    for (const g of gateway) {
      const drain = g.role === 'proxy' ? Number(g.env.get('DRAIN_TIMEOUT_MS') ?? DEFAULT_DRAIN_MS) : g.role === 'writer' ? WRITER_CLOSE_MS : 0;
      expect(seconds(g.service.stop_grace_period) * 1000, g.name).toBeGreaterThanOrEqual(drain + FLUSH_MARGIN_MS);
      expect(g.service.read_only, g.name).toBe(true);
    }
  });

  it('points the proxies at the control plane\'s invalidation stream, with the token the control plane holds', () => {
    const [control] = byRole('control-plane');
    for (const g of byRole('proxy')) {
      const url = new URL(g.env.get('CONTROL_PLANE_URL') ?? 'missing:');
      expect(url.hostname).toBe(control?.name);
      expect(Number(url.port)).toBe(listenerPort('CONTROL_PORT', control?.env ?? new Map()));
      expect(g.env.get('INTERNAL_TOKEN')).toBe(control?.env.get('INTERNAL_TOKEN'));
    }
  });

  it('mounts a providers file the proxy accepts where GATEWAY_CONFIG points', () => {
    const text = readFileSync(join(DIR, 'providers.yaml'), 'utf8');
    expect(parseProvidersFile(text, 'providers.yaml', {}, PROVIDER_TYPES).providers.map((p) => p.type)).toEqual(['mock']);
    for (const g of byRole('proxy')) expect(g.service.volumes).toContain(`./providers.yaml:${g.env.get('GATEWAY_CONFIG')}:ro`);
  });

  it('balances over both proxies, checking each one\'s readiness where it serves it', () => {
    const cfg = section('backend proxies');
    const servers = [...cfg.matchAll(/^\s*server (\S+) ([\w-]+):(\d+)/gm)].map((m) => ({ host: m[2], port: Number(m[3]) }));
    expect(servers.map((s) => s.host).sort()).toEqual(byRole('proxy').map((g) => g.name).sort());
    for (const g of byRole('proxy')) {
      expect(servers.find((s) => s.host === g.name)?.port).toBe(listenerPort('PROXY_PORT', g.env));
      expect(cfg).toContain(`port ${listenerPort('METRICS_PORT', g.env)}`);
      // X-Forwarded-For is believed from the balancer alone.
      expect(g.env.get('TRUST_PROXY')).toBe((compose.services.lb as { networks: Record<string, { ipv4_address: string }> }).networks.gateway?.ipv4_address);
    }
    expect(cfg).toMatch(/option httpchk GET \/readyz/);
  });

  it('puts the management API behind the balancer too, believing only the balancer, and seeds no demo unless asked', () => {
    const lb = compose.services.lb as Service & { ports: string[]; networks: Record<string, { ipv4_address: string }> };
    const [control] = byRole('control-plane');
    const cfg = section('backend control_planes');
    const server = /^\s*server \S+ ([\w-]+):(\d+)/m.exec(cfg);
    expect(server?.[1]).toBe(control?.name);
    expect(Number(server?.[2])).toBe(listenerPort('CONTROL_PORT', control?.env ?? new Map()));
    expect(cfg).toMatch(/option httpchk GET \/readyz/);
    // Published by the balancer, not by the control plane itself.
    expect(lb.ports).toContain(`${listenerPort('CONTROL_PORT', control?.env ?? new Map())}:${listenerPort('CONTROL_PORT', control?.env ?? new Map())}`);
    expect((control?.service as { ports?: unknown }).ports).toBeUndefined();
    expect(control?.env.get('TRUST_PROXY')).toBe(lb.networks.gateway?.ipv4_address);
    expect(control?.env.get('CONTROL_HOST')).toBe('0.0.0.0');
    // A client's own X-Forwarded-Proto never reaches the control plane as if the balancer had said it.
    expect(section('frontend management')).toMatch(/http-request del-header X-Forwarded-Proto/);
    expect(control?.env.get('DEMO_SEED')).toBe('${DEMO_SEED:-false}');
  });
});

/** One `frontend`/`backend` block of haproxy.cfg, up to the next block. */
function section(header: string): string {
  const cfg = readFileSync(join(DIR, 'haproxy.cfg'), 'utf8');
  const start = cfg.indexOf(`\n${header}\n`);
  if (start === -1) throw new Error(`haproxy.cfg has no ${header}`);
  const rest = cfg.slice(start + header.length + 2);
  const end = rest.search(/^(frontend|backend|defaults|global)\b/m);
  return end === -1 ? rest : rest.slice(0, end);
}

import { baseUrl } from '../base-url.js';
import { EXIT, UnreachableError, UsageError, type ExitCode } from '../cli-errors.js';
import { text, type CommandSpec } from '../command.js';
import { readConfig } from '../config-file.js';
import { Http } from '../http.js';
import type { Column } from '../output.js';

/**
 * GET /healthz (the process answers) and /readyz (its dependencies answer) of the control plane
 * and, when given, a proxy's and a writer's operations port. Exit 0 when everything is ready, 1
 * when something answered not ready, 4 when something could not be reached at all.
 */
interface Check {
  target: string;
  url: string;
  check: 'healthz' | 'readyz';
  /** The HTTP status, null when nothing answered. */
  http_status: number | null;
  ok: boolean;
  /** The answer's body, or why there was none. */
  body: unknown;
  error: string | null;
}

const COLUMNS: Column<Check>[] = [
  { field: 'target', get: (c) => c.target },
  { field: 'check', get: (c) => c.check },
  { field: 'http_status', title: 'HTTP', kind: 'number', get: (c) => c.http_status },
  { field: 'ok', kind: 'flag', get: (c) => c.ok },
  { field: 'detail', get: (c) => c.error ?? detail(c.body) },
  { field: 'url', get: (c) => c.url },
];

function detail(body: unknown): string {
  if (typeof body !== 'object' || body === null) return String(body ?? '');
  return Object.entries(body)
    .map(([name, value]) => `${name}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ');
}

async function probe(target: string, base: string, check: Check['check'], http: Http): Promise<Check> {
  const url = http.url(`/${check}`);
  try {
    const answer = await http.send({ method: 'GET', path: `/${check}` });
    return { target, url, check, http_status: answer.status, ok: answer.status === 200, body: answer.body, error: null };
  } catch (err) {
    if (!(err instanceof UnreachableError)) throw err;
    return { target, url, check, http_status: null, ok: false, body: null, error: err.message.replace(`cannot reach ${base}: `, 'unreachable: ') };
  }
}

export const health: CommandSpec = {
  path: ['health'],
  summary: 'Liveness and readiness of the control plane, and of a proxy or writer',
  options: {
    url: { type: 'string', value: '<url>', help: 'the control plane (default: the one signed in to)' },
    proxy: { type: 'string', value: '<url>', help: "a proxy's operations port, e.g. http://127.0.0.1:9464" },
    writer: { type: 'string', value: '<url>', help: "a writer's port, e.g. http://127.0.0.1:8082" },
  },
  async run(ctx): Promise<ExitCode> {
    const targets: [string, string][] = [];
    const given = text(ctx, 'url');
    const controlPlane = given === undefined ? (await readConfig(ctx.config.path))?.url : baseUrl(given, 'url');
    if (controlPlane !== undefined) targets.push(['control-plane', controlPlane]);
    for (const name of ['proxy', 'writer'] as const) {
      const url = text(ctx, name);
      if (url !== undefined) targets.push([name, baseUrl(url, name)]);
    }
    if (targets.length === 0) throw new UsageError('nothing to check: give --url (or sign in first), --proxy or --writer');
    const checks = await Promise.all(
      targets.flatMap(([target, base]) => {
        const http = new Http(base, ctx.verbose);
        return (['healthz', 'readyz'] as const).map((check) => probe(target, base, check, http));
      }),
    );
    ctx.out.list(checks, checks, COLUMNS);
    if (checks.some((c) => c.http_status === null)) return EXIT.unreachable;
    return checks.every((c) => c.ok) ? EXIT.ok : EXIT.api;
  },
};

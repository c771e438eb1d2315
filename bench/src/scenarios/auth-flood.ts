import { randomBytes } from 'node:crypto';
import type { RawRequest } from 'autocannon';
import { userAgent } from '../harness/context.js';
import { chatBody, chatHeaders, CHAT_PATH } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { runLoad, type LoadResult } from '../harness/load.js';
import { countAudit, waitingJobIds } from '../harness/queue.js';
import { cpuSeconds, sleep } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atLeast, ratio, rps, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type Target } from '../harness/stack.js';
import { median, rotations } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * A flood of bad keys must not be slower than good traffic, and every refused request must still
 * be audited. Bad keys are well-formed (they pass the cheap shape check), so each costs a hash
 * and, when new, a Redis lookup: the worst case a flood can force. Audit events are counted in the
 * queue itself afterwards, by the User-Agent each mode sends.
 */
export const TARGET_BAD_OVER_GOOD = 1.0;

type Mode = 'good' | 'bad-unique' | 'bad-repeated';
const MODES: Mode[] = ['good', 'bad-unique', 'bad-repeated'];
const MODE_TEXT: Record<Mode, string> = {
  good: 'valid key',
  'bad-unique': 'bad keys, a new one each request',
  'bad-repeated': 'one bad key, repeated',
};

/** A key of the product's shape (`gw_` + 43 characters) that no project owns. */
function badKeyFactory(): () => string {
  const stem = `gw_${randomBytes(16).toString('base64url')}`;
  let n = 0;
  return () => `${stem}${(n++).toString(36).padStart(43 - (stem.length - 3), '0')}`;
}

function perRequestFor(mode: Mode, base: Record<string, string>): (request: RawRequest) => RawRequest {
  // Every mode rewrites its request, so the load generator does the same work in each.
  if (mode === 'bad-unique') {
    const next = badKeyFactory();
    return (request) => ({ ...request, headers: { ...base, 'x-api-key': next() } });
  }
  return (request) => ({ ...request, headers: base });
}

export const authFlood: Scenario = {
  name: 'auth-flood',
  title: 'Auth-failure throughput and auditing',
  async run(ctx): Promise<ScenarioOutcome> {
    const good = await projectKey(ctx.redis, ctx.keys);
    const repeatedBad = badKeyFactory()();
    const mock = await startMock(ctx);
    // The per-address throttle (AUTH_FAILURE_LIMIT) would answer nearly all of one load
    // generator's bad keys 429 before any lookup. What is measured is the flood it cannot stop,
    // one from many addresses, where every bad key is looked up: the throttle is off.
    const gateway = await startGateway(ctx, mock.origin, 'auth-flood', { gatewayEnv: { AUTH_FAILURE_LIMIT: '0' } });
    const jobsBefore = new Set(await waitingJobIds(ctx.redis, ctx.keys));
    const results = new Map<Mode, (LoadResult & { cpuUsPerRequest: number })[]>(MODES.map((m) => [m, []]));
    const keyOf = (mode: Mode) => (mode === 'good' ? good.key : mode === 'bad-repeated' ? repeatedBad : 'replaced per request');
    const load = async (mode: Mode, durationS: number) => {
      const target: Target = { name: mode, origin: gateway.origin, key: keyOf(mode), model: BENCH_MODEL };
      const headers = chatHeaders(target, userAgent('auth-flood', mode));
      const cpuBefore = cpuSeconds(gateway.child.pid);
      const result = await runLoad({ url: `${gateway.origin}${CHAT_PATH}`, connections: ctx.options.connections, durationS, headers, body: chatBody(BENCH_MODEL), perRequest: perRequestFor(mode, headers) });
      return { ...result, cpuUsPerRequest: ((cpuSeconds(gateway.child.pid) - cpuBefore) * 1e6) / Math.max(1, result.completed) };
    };
    let gatewayFinished = 0;
    // Warm-up answers are audited like the rest, so they count in the audit check (not in the figures).
    const warmups: LoadResult[] = [];
    try {
      for (const mode of MODES) {
        progress(`auth-flood: warming ${mode}`);
        warmups.push(await load(mode, sized(ctx, 2, 1)));
      }
      const orders = rotations(MODES, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const mode of order) {
          const result = await load(mode, ctx.options.durationS);
          results.get(mode)?.push(result);
          progress(
            `auth-flood: round ${r + 1}/${orders.length} ${mode}: ${formatInt(result.rps)} req/s, ${Math.round(result.cpuUsPerRequest)} µs CPU/request, ` +
              `status ${JSON.stringify(result.statusCodes)}, ${result.errors} errors`,
          );
        }
      }
      await sleep(200);
      gatewayFinished = (await gateway.tally()).requests;
    } finally {
      await gateway.stop();
      await mock.stop();
    }
    // The drained gateway has flushed every record; only jobs added during this scenario count.
    const jobs = (await waitingJobIds(ctx.redis, ctx.keys)).filter((id) => !jobsBefore.has(id));
    const audit = await countAudit(ctx.redis, ctx.keys, jobs);
    const auditedBy = (mode: Mode, outcome?: string) => {
      const byOutcome = audit.get(userAgent('auth-flood', mode));
      if (byOutcome === undefined) return 0;
      return outcome === undefined ? [...byOutcome.values()].reduce((a, b) => a + b, 0) : (byOutcome.get(outcome) ?? 0);
    };
    const auditedTotal = MODES.reduce((n, m) => n + auditedBy(m), 0);
    const medianRps = (mode: Mode) => median((results.get(mode) ?? []).map((r) => r.rps));
    const sumOf = (mode: Mode, f: (r: LoadResult) => number) => (results.get(mode) ?? []).reduce((n, r) => n + f(r), 0);
    const goodRps = medianRps('good');
    const unexpected =
      sumOf('good', (r) => r.errors + r.non2xx) + sumOf('bad-unique', (r) => r.errors + r.completed - (r.statusCodes['401'] ?? 0)) + sumOf('bad-repeated', (r) => r.errors + r.completed - (r.statusCodes['401'] ?? 0));
    const rows: Row[] = MODES.map((mode) => {
      const value = medianRps(mode);
      if (mode === 'good') return { figure: `${MODE_TEXT[mode]}, median of ${ctx.options.rounds} × ${ctx.options.durationS} s`, gateway: rps(value), result: '', verdict: 'info' };
      return {
        figure: MODE_TEXT[mode],
        gateway: rps(value),
        result: `bad/good ${ratio(value / goodRps)}`,
        target: `≥ ${TARGET_BAD_OVER_GOOD.toFixed(2)}`,
        verdict: atLeast(value / goodRps, TARGET_BAD_OVER_GOOD),
      };
    });
    const cpu = (mode: Mode) => median((results.get(mode) ?? []).map((r) => r.cpuUsPerRequest));
    rows.push({
      figure: 'gateway CPU per request: valid / new bad / repeated bad key',
      gateway: `${us(cpu('good'))} / ${us(cpu('bad-unique'))} / ${us(cpu('bad-repeated'))}`,
      result: '',
      verdict: 'info',
    });
    const bad401 =
      sumOf('bad-unique', (r) => r.statusCodes['401'] ?? 0) + sumOf('bad-repeated', (r) => r.statusCodes['401'] ?? 0) + warmups.reduce((n, r) => n + (r.statusCodes['401'] ?? 0), 0);
    const badAudited = auditedBy('bad-unique', 'auth_failed') + auditedBy('bad-repeated', 'auth_failed');
    rows.push({
      figure: 'audit events in the queue / requests the gateway finished',
      gateway: `${formatInt(auditedTotal)} / ${formatInt(gatewayFinished)}`,
      result: `auth_failed ${formatInt(badAudited)} ≥ 401s answered ${formatInt(bad401)}`,
      verdict: auditedTotal === gatewayFinished && badAudited >= bad401 ? 'pass' : 'miss',
    });
    return {
      errors: unexpected,
      rows,
      data: {
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        modes: Object.fromEntries(MODES.map((m) => [m, { medianRps: medianRps(m), medianCpuUsPerRequest: cpu(m), rounds: results.get(m) }])),
        badOverGood: { unique: medianRps('bad-unique') / goodRps, repeated: medianRps('bad-repeated') / goodRps },
        audit: { inQueue: auditedTotal, gatewayFinished, authFailedInQueue: badAudited, client401: bad401, byUserAgent: Object.fromEntries([...audit].map(([ua, m]) => [ua, Object.fromEntries(m)])) },
      },
    };
  },
};

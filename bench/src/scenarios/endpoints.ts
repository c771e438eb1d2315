import { userAgent } from '../harness/context.js';
import { chatBody, chatHeaders } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { runLoad } from '../harness/load.js';
import { cpuSeconds } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { ratio, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock } from '../harness/stack.js';
import { loadErrors, summariseTarget, type CpuLoadResult } from './throughput.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * The cost of the inbound protocols: the same question through one gateway (one worker, the mock
 * as an openai-typed provider) on `/v1/chat/completions` (no translation), `/v1/messages` and
 * `/v1/responses` (parsed into the internal request and rendered back). Req/s at saturation and
 * CPU per request of the gateway process; the difference over chat completions is what the
 * translation costs.
 */
const SYSTEM = 'Answer in one sentence.';
const QUESTION = 'Write one sentence about measuring proxies.';

const ENDPOINTS = [
  { name: 'chat.completions', path: '/v1/chat/completions', body: chatBody(BENCH_MODEL) },
  {
    name: 'messages',
    path: '/v1/messages',
    body: JSON.stringify({ model: BENCH_MODEL, system: SYSTEM, messages: [{ role: 'user', content: QUESTION }], max_tokens: 64, temperature: 0.7 }),
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: JSON.stringify({ model: BENCH_MODEL, instructions: SYSTEM, input: QUESTION, max_output_tokens: 64, temperature: 0.7 }),
  },
] as const;

export const endpoints: Scenario = {
  name: 'endpoints',
  title: 'Inbound protocols: translation cost per request',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const mock = await startMock(ctx);
    const gateway = await startGateway(ctx, mock.origin, 'endpoints');
    const ua = userAgent('endpoints');
    const results = new Map<string, CpuLoadResult[]>(ENDPOINTS.map((e) => [e.name, []]));
    let errors = 0;
    try {
      const window = (e: (typeof ENDPOINTS)[number], durationS: number) => {
        const before = cpuSeconds(gateway.child.pid);
        return runLoad({ url: `${gateway.origin}${e.path}`, connections: ctx.options.connections, durationS, headers: chatHeaders({ key: key.key }, ua), body: e.body }).then((r) => ({
          ...r,
          cpuUsPerRequest: ((cpuSeconds(gateway.child.pid) - before) * 1e6) / Math.max(1, r.completed),
        }));
      };
      for (const e of ENDPOINTS) await window(e, sized(ctx, 2, 1));
      for (let r = 0; r < ctx.options.rounds; r++) {
        for (const e of ENDPOINTS) {
          const result = await window(e, Math.min(ctx.options.durationS, 5));
          errors += loadErrors(result);
          results.get(e.name)?.push(result);
          progress(`endpoints: round ${r + 1}/${ctx.options.rounds} ${e.name}: ${formatInt(result.rps)} req/s, ${Math.round(result.cpuUsPerRequest)} µs CPU/request`);
        }
      }
    } finally {
      await gateway.stop();
      await mock.stop();
    }
    const summary = Object.fromEntries(ENDPOINTS.map((e) => [e.name, summariseTarget(results.get(e.name) ?? [])]));
    const chat = summary['chat.completions']!;
    const rows: Row[] = ENDPOINTS.map((e) => {
      const s = summary[e.name]!;
      return {
        figure: `${e.path}: req/s, CPU per request`,
        gateway: `${rps(s.medianRps)}, ${us(s.medianCpuUsPerRequest)}`,
        result: e.name === 'chat.completions' ? 'no translation' : `×${ratio(s.medianRps / chat.medianRps)} req/s, ${signedUs(s.medianCpuUsPerRequest - chat.medianCpuUsPerRequest)} CPU per request`,
        verdict: 'info' as const,
      };
    });
    return { errors, rows, data: summary };
  },
};

import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userAgent, type RunContext } from '../harness/context.js';
import { projectKey } from '../harness/keys.js';
import { spawnNode, waitForOutput } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atMost, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, type GatewayService, type Target } from '../harness/stack.js';
import { rotations } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult } from './throughput.js';

/**
 * What the cloud adapters' translation costs. Four one-worker gateways stand in front of the same
 * upstream (bench/src/cloud-upstream-main.ts), which gives the same short answer in each wire
 * format: an openai-typed provider (the body goes as it came: the baseline), a bedrock-typed one
 * (Converse, every request SigV4-signed), and a vertex-typed one for a Gemini model
 * (generateContent) and for a Claude model (rawPredict), each with a bearer token from the
 * service account's token endpoint. Saturation gives each one's req/s; the CPU figure is taken at
 * one fixed rate that every variant sustains (a process answering fewer requests per second spends
 * more CPU on each, fewer being handled per wake-up, so CPU at saturation would charge the slower
 * upstream's lower rate to the adapter): each gateway's CPU per request against the openai-typed
 * gateway's, in the same run, target at most +30 µs.
 */
const TYPES = ['openai', 'bedrock', 'vertex-gemini', 'vertex-claude'] as const;
type Variant = (typeof TYPES)[number];
const TARGET_US = 30;
/** Below the slowest variant's saturation on a 2-core machine (bedrock, whose mock verifies SigV4). */
const FIXED_RATE = 2_000;

function providersFile(ctx: RunContext, variant: Variant, upstream: string, keyFile: string): string {
  const common = { name: 'bench-upstream', max_connections: 20_000, timeout_ms: 300_000, idle_timeout_ms: 300_000 };
  const provider =
    variant === 'openai'
      ? { ...common, type: 'openai', base_url: `${upstream}/v1`, models: [BENCH_MODEL] }
      : variant === 'bedrock'
        ? { ...common, type: 'bedrock', region: 'us-east-1', base_url: upstream, aws_access_key_id: 'AKIABENCH0000000000', aws_secret_access_key: 'bench-secret-access-key-0123456789abcdefgh', models: [{ id: BENCH_MODEL, upstream: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }] }
        : { ...common, type: 'vertex', project: 'bench-project', location: 'us-central1', credentials_file: keyFile, base_url: upstream, models: [{ id: BENCH_MODEL, upstream: variant === 'vertex-gemini' ? 'gemini-2.5-flash' : 'claude-sonnet-4-5@20250929' }] };
  const file = join(ctx.tmpDir, `providers-cloud-${variant}.json`);
  writeFileSync(file, JSON.stringify({ providers: [provider] }, null, 2));
  return file;
}

function serviceAccountKey(ctx: RunContext, upstream: string): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const file = join(ctx.tmpDir, 'bench-service-account.json');
  writeFileSync(
    file,
    JSON.stringify({ type: 'service_account', project_id: 'bench-project', private_key_id: 'bench', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: 'bench@bench-project.iam.gserviceaccount.com', token_uri: `${upstream}/token` }),
  );
  return file;
}

export const cloudProviders: Scenario = {
  name: 'cloud-providers',
  title: 'Bedrock and Vertex AI adapters: translation cost over the OpenAI pass-through',
  async run(ctx): Promise<ScenarioOutcome> {
    const key = await projectKey(ctx.redis, ctx.keys);
    const upstreamChild = spawnNode('cloud upstream', 'bench/dist/cloud-upstream-main.js', ['0']);
    const gateways = new Map<Variant, GatewayService>();
    const saturation = new Map<Variant, CpuLoadResult[]>(TYPES.map((t) => [t, []]));
    const paced = new Map<Variant, CpuLoadResult[]>(TYPES.map((t) => [t, []]));
    let errors = 0;
    try {
      const [, port] = await waitForOutput(upstreamChild, /listening (\d+)/);
      const upstream = `http://127.0.0.1:${port}`;
      const keyFile = serviceAccountKey(ctx, upstream);
      for (const variant of TYPES) gateways.set(variant, await startGateway(ctx, upstream, `cloud-providers-${variant}`, { providersFile: providersFile(ctx, variant, upstream, keyFile) }));
      const targets: Target[] = TYPES.map((variant) => ({ name: variant, origin: (gateways.get(variant) as GatewayService).origin, key: key.key, model: BENCH_MODEL }));
      const pidOf = (t: Target) => (gateways.get(t.name as Variant) as GatewayService).child.pid;
      for (const target of targets) {
        progress(`cloud-providers: warming the ${target.name}-typed gateway`);
        errors += loadErrors(await saturate(target, pidOf(target), ctx, sized(ctx, 3, 1), userAgent('cloud-providers', target.name)));
      }
      const orders = rotations(targets, ctx.options.rounds);
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const load = await saturate(target, pidOf(target), ctx, ctx.options.durationS, userAgent('cloud-providers', target.name));
          saturation.get(target.name as Variant)?.push(load);
          errors += loadErrors(load);
          progress(`cloud-providers: round ${r + 1}/${orders.length} ${target.name}: ${formatInt(load.rps)} req/s, ${Math.round(load.cpuUsPerRequest)} µs CPU/request`);
          const steady = await saturate(target, pidOf(target), ctx, ctx.options.durationS, userAgent('cloud-providers', target.name), FIXED_RATE);
          paced.get(target.name as Variant)?.push(steady);
          errors += loadErrors(steady);
          progress(`cloud-providers: round ${r + 1}/${orders.length} ${target.name} at ${formatInt(FIXED_RATE)} req/s: ${Math.round(steady.cpuUsPerRequest)} µs CPU/request`);
        }
      }
    } finally {
      try {
        for (const gateway of gateways.values()) await gateway.stop();
      } finally {
        await upstreamChild.stop();
      }
    }

    const load = Object.fromEntries(TYPES.map((t) => [t, summariseTarget(saturation.get(t) ?? [])])) as Record<Variant, ReturnType<typeof summariseTarget>>;
    const steady = Object.fromEntries(TYPES.map((t) => [t, summariseTarget(paced.get(t) ?? [])])) as Record<Variant, ReturnType<typeof summariseTarget>>;
    const base = load.openai;
    const steadyBase = steady.openai;
    const rows: Row[] = [
      {
        figure: `req/s, 1 worker, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns`,
        gateway: TYPES.map((t) => `${t} ${rps(load[t].medianRps)}`).join(' / '),
        result: TYPES.slice(1).map((t) => `${t}/openai ${(load[t].medianRps / base.medianRps).toFixed(2)}`).join(', '),
        verdict: 'info',
      },
      ...TYPES.slice(1).map((t): Row => {
        const added = steady[t].medianCpuUsPerRequest - steadyBase.medianCpuUsPerRequest;
        return {
          figure: `CPU per request at ${formatInt(FIXED_RATE)} req/s, gateway process: ${t}`,
          gateway: `openai ${us(steadyBase.medianCpuUsPerRequest)} / ${t} ${us(steady[t].medianCpuUsPerRequest)}`,
          result: `translation ${signedUs(added)} per request`,
          target: `≤ +${TARGET_US} µs`,
          verdict: atMost(added, TARGET_US),
        };
      }),
    ];
    return {
      errors,
      rows,
      data: {
        unit: 'µs',
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        nonStreaming: load,
        fixedRate: FIXED_RATE,
        atFixedRate: steady,
        cpuUsPerRequestAdded: Object.fromEntries(TYPES.slice(1).map((t) => [t, steady[t].medianCpuUsPerRequest - steadyBase.medianCpuUsPerRequest])),
      },
    };
  },
};

import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userAgent, type RunContext } from '../harness/context.js';
import { projectKey } from '../harness/keys.js';
import { spawnNode, waitForOutput } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atMost, rps, signedUs, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, type GatewayService, type Target } from '../harness/stack.js';
import { median, rotations } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult } from './throughput.js';
import { measureAdaptersAlone, type AdaptersAlone } from './cloud-adapters-alone.js';

/**
 * What the cloud adapters' translation costs. Six one-worker gateways stand in front of the same
 * upstream (bench/src/cloud-upstream-main.ts), which gives the same short answer in each wire
 * format: an openai-typed provider (the body goes as it came: the baseline), two bedrock-typed
 * ones (Converse; one authenticated with a Bedrock API key, so its figure is the translation
 * alone, the other SigV4-signing every request, so its figure is translation and signature), and a
 * vertex-typed one for a Gemini model (generateContent) and for a Claude model (rawPredict), each
 * with a bearer token from the service account's token endpoint; the sixth, a second openai-typed
 * gateway, measured like the others, shows the method's own error.
 *
 * Saturation gives each one's req/s. The CPU figure is taken at one fixed rate, in pairs: each
 * cloud gateway loaded at the same time as the openai-typed one, both at PAIRED_RATE, so that
 * both windows see the same machine (on a shared VM the CPU per request of one gateway moves by a
 * third from one window to the next; two gateways measured side by side move together). The
 * figure is the median over rounds of each pair's difference. (A fixed rate rather than
 * saturation: a process answering fewer requests per second spends more CPU on each, fewer being
 * handled per wake-up, which would charge a slower upstream to the adapter.) Its own error, the
 * twin's pair, has been as large as the target, so the target (at most +30 µs) is read on the
 * adapters alone (cloud-adapters-alone.ts), measured first: the same adapters, from the same
 * providers files, against the same upstream, in this process, where nothing but the difference
 * between the two paths differs.
 */
const TYPES = ['openai', 'openai-twin', 'bedrock', 'bedrock-sigv4', 'vertex-gemini', 'vertex-claude'] as const;
type Variant = (typeof TYPES)[number];
type Cloud = Exclude<Variant, 'openai'>;
/** A cloud variant's figures from its pairs: medians over rounds, and each round's two. */
interface Paired {
  openai: number;
  variant: number;
  added: number;
  perRound: Record<string, number>[];
}
const TARGET_US = 30;
/** The adapters-alone figure (cloud-adapters-alone.ts): interleaved rounds, requests per adapter per round. */
const ALONE_ROUNDS = 15;
const ALONE_REQUESTS = 4_000;
/** The translation target is the adapters'; the SigV4 variant adds the signature, reported beside it. */
const SIGNED: Variant = 'bedrock-sigv4';
/** A second openai-typed gateway: its pair's difference is the method's own error (an A/A test). */
const TWIN: Variant = 'openai-twin';
/**
 * Per gateway of a pair: two of them at this rate stay well below a 2-core machine's saturation.
 * On a slower machine the rate is a quarter of what the openai-typed gateway answers at
 * saturation (its first round), so that a pair still leaves the machine room.
 */
const PAIRED_RATE = 1_500;
const PAIRED_SHARE_OF_SATURATION = 0.25;
/** Seconds of unmeasured load a pair runs before its measured window. */
const PAIR_WARM_S = 3;

/**
 * One measured pair: the openai-typed gateway and `target` loaded at the same time, each at
 * `rate`, after an unmeasured stretch at that rate. The openai-typed gateway is loaded in every
 * pair and comes in warm, while the other has idled through the other pairs (a cold heap and cold
 * caches cost its first seconds more CPU): the stretch puts both in the same state before the
 * window. (Without it the A/A pair had read +8 to +43 µs in four runs, never below zero.) Which
 * load starts first alternates by round.
 */
async function pairedWindow(ctx: RunContext, baseline: Target, target: Target, pidOf: (t: Target) => number, rate: number, targetFirst: boolean): Promise<[CpuLoadResult, CpuLoadResult]> {
  const both = (durationS: number) => {
    const load = (t: Target) => () => saturate(t, pidOf(t), ctx, durationS, userAgent('cloud-providers', t.name), rate);
    if (!targetFirst) return Promise.all([load(baseline)(), load(target)()]);
    const started = load(target)();
    return Promise.all([load(baseline)(), started]);
  };
  await both(sized(ctx, PAIR_WARM_S, 1));
  return both(ctx.options.durationS);
}

function providersFile(ctx: RunContext, variant: Variant, upstream: string, keyFile: string): string {
  const common = { name: 'bench-upstream', max_connections: 20_000, timeout_ms: 300_000, idle_timeout_ms: 300_000 };
  const bedrock = { ...common, type: 'bedrock', region: 'us-east-1', base_url: upstream, models: [{ id: BENCH_MODEL, upstream: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }] };
  const provider =
    variant === 'openai' || variant === TWIN
      ? { ...common, type: 'openai', base_url: `${upstream}/v1`, models: [BENCH_MODEL] }
      : variant === 'bedrock'
        ? { ...bedrock, api_key: 'ABSKYmVuY2gtYmVkcm9jay1hcGkta2V5LTAxMjM0NTY3ODk=' }
        : variant === 'bedrock-sigv4'
          ? { ...bedrock, aws_access_key_id: 'AKIABENCH0000000000', aws_secret_access_key: 'bench-secret-access-key-0123456789abcdefgh' }
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
    /** Per cloud variant, per round: [the openai-typed gateway's window, the variant's], run at the same time. */
    const pairs = new Map<Variant, [CpuLoadResult, CpuLoadResult][]>(TYPES.map((t) => [t, []]));
    let errors = 0;
    /** Set before the first pair (see PAIRED_RATE). */
    let pairedRate = 0;
    let alone: AdaptersAlone | null = null;
    try {
      const [, port] = await waitForOutput(upstreamChild, /listening (\d+)/);
      const upstream = `http://127.0.0.1:${port}`;
      const keyFile = serviceAccountKey(ctx, upstream);
      const files = new Map<Variant, string>(TYPES.map((variant) => [variant, providersFile(ctx, variant, upstream, keyFile)]));
      // First, before any gateway runs: the process and the upstream have the machine to themselves.
      alone = await measureAdaptersAlone(files, BENCH_MODEL, 'openai', sized(ctx, ALONE_ROUNDS, 3), sized(ctx, ALONE_REQUESTS, 300));
      for (const variant of TYPES) gateways.set(variant, await startGateway(ctx, upstream, `cloud-providers-${variant}`, { providersFile: files.get(variant) as string }));
      const targets: Target[] = TYPES.map((variant) => ({ name: variant, origin: (gateways.get(variant) as GatewayService).origin, key: key.key, model: BENCH_MODEL }));
      const pidOf = (t: Target) => (gateways.get(t.name as Variant) as GatewayService).child.pid;
      for (const target of targets) {
        progress(`cloud-providers: warming the ${target.name}-typed gateway`);
        errors += loadErrors(await saturate(target, pidOf(target), ctx, sized(ctx, 3, 1), userAgent('cloud-providers', target.name)));
      }
      const orders = rotations(targets, ctx.options.rounds);
      const baseline = targets[0] as Target;
      for (const [r, order] of orders.entries()) {
        for (const target of order) {
          const load = await saturate(target, pidOf(target), ctx, ctx.options.durationS, userAgent('cloud-providers', target.name));
          saturation.get(target.name as Variant)?.push(load);
          errors += loadErrors(load);
          progress(`cloud-providers: round ${r + 1}/${orders.length} ${target.name}: ${formatInt(load.rps)} req/s, ${Math.round(load.cpuUsPerRequest)} µs CPU/request`);
        }
        for (const target of order) {
          if (target === baseline) continue;
          if (pairedRate === 0) {
            const openaiRps = saturation.get('openai')?.[0]?.rps ?? PAIRED_RATE / PAIRED_SHARE_OF_SATURATION;
            pairedRate = Math.min(PAIRED_RATE, Math.max(100, Math.round((openaiRps * PAIRED_SHARE_OF_SATURATION) / 100) * 100));
          }
          const pair = await pairedWindow(ctx, baseline, target, pidOf, pairedRate, r % 2 === 1);
          pairs.get(target.name as Variant)?.push(pair);
          errors += loadErrors(pair[0]) + loadErrors(pair[1]);
          progress(`cloud-providers: round ${r + 1}/${orders.length} ${target.name} beside openai at ${formatInt(pairedRate)} req/s each: ${Math.round(pair[1].cpuUsPerRequest)} against ${Math.round(pair[0].cpuUsPerRequest)} µs CPU/request`);
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
    const clouds = TYPES.slice(1) as Cloud[];
    const paired = {} as Record<Cloud, Paired>;
    for (const t of clouds) {
      const rounds = pairs.get(t) ?? [];
      paired[t] = {
        openai: median(rounds.map(([b]) => b.cpuUsPerRequest)),
        variant: median(rounds.map(([, v]) => v.cpuUsPerRequest)),
        added: median(rounds.map(([b, v]) => v.cpuUsPerRequest - b.cpuUsPerRequest)),
        perRound: rounds.map(([b, v]) => ({ openai: b.cpuUsPerRequest, [t]: v.cpuUsPerRequest })),
      };
    }
    const base = load.openai;
    const adapters = alone as AdaptersAlone | null;
    const aloneRows = clouds.map((t): Row => {
      const added = adapters?.added[t] ?? Number.NaN;
      const figure = `CPU per request, the adapter alone (median of ${adapters?.rounds ?? 0} × ${formatInt(adapters?.requestsPerRound ?? 0)}): ${t}`;
      const gateway = `openai ${us(adapters?.cpuUs.openai ?? Number.NaN)} / ${t} ${us(adapters?.cpuUs[t] ?? Number.NaN)}`;
      if (t === TWIN) return { figure, gateway, result: `${signedUs(added)} per request: the method's own error (the same adapter twice)`, verdict: 'info' };
      if (t === SIGNED) return { figure, gateway, result: `translation and SigV4 signature ${signedUs(added)} per request`, verdict: 'info' };
      return { figure, gateway, result: `translation ${signedUs(added)} per request (median of the rounds' differences)`, target: `≤ +${TARGET_US} µs`, verdict: atMost(added, TARGET_US) };
    });
    const rows: Row[] = [
      {
        figure: `req/s, 1 worker, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns`,
        gateway: TYPES.map((t) => `${t} ${rps(load[t].medianRps)}`).join(' / '),
        result: clouds.map((t) => `${t}/openai ${(load[t].medianRps / base.medianRps).toFixed(2)}`).join(', '),
        verdict: 'info',
      },
      ...clouds.map((t): Row => {
        const { added } = paired[t];
        const figure = `CPU per request beside openai, ${formatInt(pairedRate)} req/s each: ${t}`;
        const gateway = `openai ${us(paired[t].openai)} / ${t} ${us(paired[t].variant)}`;
        if (t === TWIN) return { figure, gateway, result: `${signedUs(added)} per request: the method's own error (the same gateway twice)`, verdict: 'info' };
        if (t === SIGNED) {
          return { figure, gateway, result: `translation and SigV4 signature ${signedUs(added)} per request (the signature about ${signedUs(added - paired.bedrock.added)})`, verdict: 'info' };
        }
        return { figure, gateway, result: `translation ${signedUs(added)} per request, whole gateways (median of the pairs' differences; the twin's row is this method's error)`, verdict: 'info' };
      }),
      ...aloneRows,
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
        pairedRate,
        paired,
        cpuUsPerRequestAdded: Object.fromEntries(clouds.map((t) => [t, paired[t].added])),
        adaptersAlone: adapters,
      },
    };
  },
};

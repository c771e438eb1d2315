import { readFileSync } from 'node:fs';
import { parseProvidersFile } from '@gateway/shared';
import { Cancel, createAdapter, PROVIDER_TYPES } from '@gateway/proxy/providers';
import { chatBody } from '../harness/http.js';
import { progress } from '../harness/progress.js';
import { median } from '../harness/stats.js';

/**
 * The adapters alone, in this process: each variant's adapter (the gateway's own code, built from
 * the same providers file as its gateway) calls the same upstream with the request the load sends,
 * `CONCURRENCY` at a time, and the process's CPU per request is read over each window. The
 * variants take turns within each round, in a rotating order, so that each round compares them on
 * the same machine; the figure is the median over rounds of (variant − openai-typed). Nothing else
 * runs in the process meanwhile, so the difference is what the adapter does that the OpenAI
 * pass-through does not: the request translated and serialised (and signed, for SigV4), the
 * answer parsed and rebuilt, and the garbage of both. The gateway around it (key, limits,
 * records, the client's connection) is the same for every provider type.
 */
const CONCURRENCY = 8;

type Adapter = ReturnType<typeof createAdapter>;
type ChatRequest = Parameters<Adapter['complete']>[0];

export interface AdaptersAlone {
  /** Median CPU per request of each variant, µs. */
  cpuUs: Record<string, number>;
  /** Median over rounds of each variant's CPU per request minus the openai-typed one's, µs. */
  added: Record<string, number>;
  rounds: number;
  requestsPerRound: number;
}

export async function measureAdaptersAlone(files: ReadonlyMap<string, string>, model: string, baseline: string, rounds: number, perRound: number): Promise<AdaptersAlone> {
  const body = JSON.parse(chatBody(model)) as Record<string, unknown>;
  const request: ChatRequest = { body: body as ChatRequest['body'], raw: Buffer.from(JSON.stringify(body)), model, upstreamModel: '', stream: false, clientWantsUsage: false, requestId: 'bench-adapter' };
  const adapters = new Map<string, { adapter: Adapter; upstream: string }>();
  for (const [variant, file] of files) {
    const config = parseProvidersFile(readFileSync(file, 'utf8'), file, {}, PROVIDER_TYPES).providers[0];
    if (config === undefined) throw new Error(`${file} lists no provider`);
    adapters.set(variant, { adapter: createAdapter(config), upstream: config.models[0]?.upstream ?? model });
  }
  const run = async (variant: string, count: number): Promise<number> => {
    const { adapter, upstream } = adapters.get(variant)!;
    const call: ChatRequest = { ...request, upstreamModel: upstream };
    let next = 0;
    const before = process.cpuUsage();
    const worker = async () => {
      while (next < count) {
        next++;
        const result = await adapter.complete(call, new Cancel());
        if (result.status !== 200) throw new Error(`${variant}: the upstream answered ${result.status}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / count;
  };
  const variants = [...adapters.keys()];
  const perVariant = new Map<string, number[]>(variants.map((v) => [v, []]));
  const added = new Map<string, number[]>(variants.map((v) => [v, []]));
  try {
    for (const variant of variants) await run(variant, Math.max(200, perRound / 4));
    for (let r = 0; r < rounds; r++) {
      const round = new Map<string, number>();
      for (let i = 0; i < variants.length; i++) {
        const variant = variants[(i + r) % variants.length] as string;
        round.set(variant, await run(variant, perRound));
      }
      for (const variant of variants) {
        perVariant.get(variant)?.push(round.get(variant)!);
        added.get(variant)?.push(round.get(variant)! - round.get(baseline)!);
      }
      progress(`cloud-providers: adapters alone, round ${r + 1}/${rounds}: ${variants.map((v) => `${v} ${round.get(v)!.toFixed(1)} µs`).join(', ')}`);
    }
  } finally {
    for (const { adapter } of adapters.values()) await adapter.close();
  }
  return {
    cpuUs: Object.fromEntries(variants.map((v) => [v, median(perVariant.get(v)!)])),
    added: Object.fromEntries(variants.map((v) => [v, median(added.get(v)!)])),
    rounds,
    requestsPerRound: perRound,
  };
}

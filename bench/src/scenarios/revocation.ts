import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import type { RunContext } from '../harness/context.js';
import { userAgent } from '../harness/context.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { freshDatabase } from '../harness/database.js';
import { chatBody, timedStream } from '../harness/http.js';
import { projectKey } from '../harness/keys.js';
import { ROOT } from '../harness/processes.js';
import { progress } from '../harness/progress.js';
import { atMost, ms, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService } from '../harness/stack.js';
import { summarise } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Key revocation across two proxy replicas sharing one Redis prefix: a stream in flight on each,
 * the key deleted through the management API (DELETE /v1/projects/{id}/keys/{key_id}), and the
 * time from the 204 until both streams have received their UNAUTHORIZED event. The control plane
 * publishes the invalidation before it answers, so a cut often arrives first; those count as 0.
 */
export const TARGET_P99_MS = 50;
const CUT_TIMEOUT_MS = 5_000;

interface LiveKey {
  id: string;
  projectId: string;
  hash: string | null;
  key: string;
}

/** How keys are made and deleted: the real management API when it is built, else the projection. */
interface KeyAdmin {
  via: string;
  create(i: number): Promise<LiveKey>;
  remove(key: LiveKey): Promise<void>;
  stop(): Promise<void>;
}

async function managementApi(ctx: RunContext): Promise<KeyAdmin> {
  const db = freshDatabase(ctx.options.databaseUrl, 'revocation');
  let cp: ControlPlane | null = null;
  try {
    cp = await startControlPlane(ctx, db.url, ctx.prefix);
    const api = cp;
    const project = await api.call<{ id: string }>('POST', '/v1/projects', { name: 'bench revocation' }, 201);
    return {
      via: 'DELETE /v1/projects/{id}/keys/{key_id}',
      async create(i) {
        const made = await api.call<{ id: string; key: string }>('POST', `/v1/projects/${project.id}/keys`, { name: `bench ${i}` }, 201);
        return { id: made.id, projectId: project.id, hash: null, key: made.key };
      },
      async remove(key) {
        await api.call('DELETE', `/v1/projects/${key.projectId}/keys/${key.id}`, undefined, 204);
      },
      async stop() {
        await api.stop();
        await db.drop();
      },
    };
  } catch (err) {
    await cp?.stop();
    await db.drop();
    throw err;
  }
}

async function projectionOnly(ctx: RunContext): Promise<KeyAdmin> {
  const module = (await import(pathToFileURL(join(ROOT, 'control-plane/dist/keys/projection.js')).href)) as {
    KeyProjection: new (redis: RunContext['redis'], keys: RunContext['keys']) => { remove(key: { id: string; project_id: string; key_hash: string }): Promise<void> };
  };
  const projection = new module.KeyProjection(ctx.redis, ctx.keys);
  return {
    via: 'KeyProjection.remove',
    async create() {
      const k = await projectKey(ctx.redis, ctx.keys);
      return { id: k.id, projectId: k.projectId, hash: k.hash, key: k.key };
    },
    async remove(key) {
      await projection.remove({ id: key.id, project_id: key.projectId, key_hash: key.hash as string });
    },
    async stop() {},
  };
}

interface HeldRevocable {
  first: Promise<void>;
  /** Resolves with the hrtime at which the stream was seen cut, and whether it was cut correctly. */
  cut: Promise<{ at: bigint; unauthorized: boolean; sawDone: boolean }>;
}

function holdOne(pool: Pool, origin: string, key: string): HeldRevocable {
  let firstSeen: () => void = () => {};
  const first = new Promise<void>((resolve) => (firstSeen = resolve));
  let cutAt: bigint | null = null;
  let unauthorized = false;
  let count = 0;
  const done = timedStream(
    pool,
    { name: 'gateway', origin, key, model: BENCH_MODEL },
    chatBody(BENCH_MODEL, { stream: true, mock: { hang_after_chunks: 1 } }),
    userAgent('revocation'),
    (event) => {
      count++;
      if (count === 1) firstSeen();
      else if (cutAt === null) {
        cutAt = process.hrtime.bigint();
        unauthorized = event.data.includes('"UNAUTHORIZED"');
      }
    },
  );
  const cut = done.then((outcome) => {
    if (outcome.events.length === 0 || outcome.status !== 200) firstSeen();
    return { at: cutAt ?? process.hrtime.bigint(), unauthorized, sawDone: outcome.events.some((e) => e.data === '[DONE]') };
  });
  return { first, cut };
}

function within<T>(promise: Promise<T>, msLimit: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), msLimit)))]).finally(() => clearTimeout(timer));
}

export const revocation: Scenario = {
  name: 'revocation',
  title: 'Key revocation latency across two replicas',
  async run(ctx): Promise<ScenarioOutcome> {
    const count = sized(ctx, 200, 20);
    const withApi = existsSync(join(ROOT, 'control-plane/dist/main.js')) && existsSync(join(ROOT, 'control-plane/dist/http/routes/keys.js'));
    const mock = await startMock(ctx);
    const replicas: GatewayService[] = [];
    let admin: KeyAdmin | null = null;
    const answeredToCut: number[] = [];
    const sentToCut: number[] = [];
    let correct = 0;
    let failures = 0;
    let aborted = 0;
    const pools: Pool[] = [];
    try {
      admin = withApi ? await managementApi(ctx) : await projectionOnly(ctx);
      replicas.push(await startGateway(ctx, mock.origin, 'revocation'), await startGateway(ctx, mock.origin, 'revocation'));
      pools.push(...replicas.map((r) => new Pool(r.origin, { connections: 4 })));
      progress(`revocation: ${count} deletions via ${admin.via}, two replicas`);
      const abortedBefore = (await mock.stats()).aborted;
      for (let i = 0; i < count; i++) {
        const key = await admin.create(i);
        const held = replicas.map((r, j) => holdOne(pools[j] as Pool, r.origin, key.key));
        try {
          await within(Promise.all(held.map((h) => h.first)), CUT_TIMEOUT_MS, 'stream did not start');
          const sent = process.hrtime.bigint();
          await admin.remove(key);
          const answered = process.hrtime.bigint();
          const cuts = await within(Promise.all(held.map((h) => h.cut)), CUT_TIMEOUT_MS, 'stream not cut');
          const last = cuts.reduce((m, c) => (c.at > m ? c.at : m), 0n);
          answeredToCut.push(Math.max(0, Number(last - answered) / 1e6));
          sentToCut.push(Number(last - sent) / 1e6);
          correct += cuts.filter((c) => c.unauthorized && !c.sawDone).length;
        } catch (err) {
          failures++;
          progress(`revocation: #${i + 1} failed: ${(err as Error).message}`);
          // A stream that never started must not outlive the measurement.
          await admin.remove(key).catch(() => {});
        }
        if ((i + 1) % 50 === 0) progress(`revocation: ${i + 1}/${count} done`);
      }
      aborted = (await mock.stats()).aborted - abortedBefore;
    } finally {
      await Promise.all(pools.map((p) => p.destroy()));
      for (const r of replicas) await r.stop();
      await admin?.stop();
      await mock.stop();
    }
    const answered = summarise(answeredToCut);
    const sent = summarise(sentToCut);
    const rows: Row[] = [
      { figure: `DELETE answered → cut on both replicas p50 (n=${answered.count})`, gateway: ms(answered.p50), result: '', verdict: 'info' },
      {
        figure: 'DELETE answered → cut on both replicas p99',
        gateway: ms(answered.p99),
        result: `max ${ms(answered.max)}`,
        target: `≤ ${TARGET_P99_MS} ms`,
        verdict: failures === 0 ? atMost(answered.p99, TARGET_P99_MS) : 'miss',
      },
      { figure: 'DELETE sent → cut on both replicas p50 / p99', gateway: `${ms(sent.p50)} / ${ms(sent.p99)}`, result: '', verdict: 'info' },
      {
        figure: 'streams ended by one UNAUTHORIZED event, no [DONE]',
        gateway: `${correct}/${count * 2}`,
        result: `upstream aborted ${aborted}/${count * 2}`,
        verdict: correct === count * 2 && failures === 0 ? 'pass' : 'miss',
      },
    ];
    return {
      errors: count * 2 - correct,
      rows,
      data: { via: admin?.via ?? null, revocations: count, replicas: 2, unit: 'ms', answeredToCut: answered, sentToCut: sent, correctlyCut: correct, failures, upstreamAborted: aborted },
    };
  },
};

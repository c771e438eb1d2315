import { connectRedis, parseAddresses, type RedisClient } from '@gateway/shared';
import type { RunContext } from '../harness/context.js';
import { userAgent } from '../harness/context.js';
import { connect, freshDatabase } from '../harness/database.js';
import { projectKey } from '../harness/keys.js';
import { sleep, spawnNode, waitForOutput } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { startRedisCluster, type RedisClusterHandle } from '../harness/redis-cluster.js';
import { ms, ratio, rps, us, type Row } from '../harness/report.js';
import { BENCH_MODEL, startGateway, startMock, type GatewayService, type Target } from '../harness/stack.js';
import { rotations } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';
import { loadErrors, saturate, summariseTarget, type CpuLoadResult } from './throughput.js';

/**
 * The throughput scenario's gateway twice, in front of the same mock: once on the run's
 * standalone Redis, once on a six-node Redis Cluster (three masters, three replicas) this
 * scenario starts on the same machine. Interleaved rounds; the figure is cluster / standalone.
 * The cluster gateway's records are then drained from the cluster by a writer of its own, and
 * every one must land.
 */
const NAME = 'throughput-cluster';

export const throughputCluster: Scenario = {
  name: NAME,
  title: 'Non-streaming throughput with Redis Cluster against standalone Redis',
  async run(ctx): Promise<ScenarioOutcome> {
    progress(`${NAME}: starting a six-node Redis Cluster`);
    const cluster = await startRedisCluster();
    let clusterClient: RedisClient | undefined;
    let mock: Awaited<ReturnType<typeof startMock>> | undefined;
    const gateways: GatewayService[] = [];
    const results = new Map<string, CpuLoadResult[]>([['standalone', []], ['cluster', []]]);
    let tally = { requests: 0, routed: 0, dropped: 0 };
    let landed = { audit: 0, usage: 0, seconds: Number.NaN };
    try {
      const clusterEnv = { REDIS_CLUSTER_NODES: cluster.seeds };
      clusterClient = await connectRedis({ kind: 'cluster', nodes: parseAddresses('REDIS_CLUSTER_NODES', cluster.seeds), tls: false });
      const standaloneKey = await projectKey(ctx.redis, ctx.keys);
      const clusterKey = await projectKey(clusterClient, ctx.keys);
      mock = await startMock(ctx);
      const standalone = await startGateway(ctx, mock.origin, NAME);
      gateways.push(standalone);
      const onCluster = await startGateway(ctx, mock.origin, `${NAME}/cluster`, { gatewayEnv: clusterEnv });
      gateways.push(onCluster);
      const targets: (Target & { gateway: GatewayService })[] = [
        { name: 'standalone', origin: standalone.origin, key: standaloneKey.key, model: BENCH_MODEL, gateway: standalone },
        { name: 'cluster', origin: onCluster.origin, key: clusterKey.key, model: BENCH_MODEL, gateway: onCluster },
      ];
      const uaOf = (t: Target) => (t.name === 'cluster' ? userAgent(NAME, 'cluster') : userAgent(NAME));
      const warm = sized(ctx, 3, 1);
      for (const target of targets) {
        progress(`${NAME}: warming ${target.name} (${warm} s)`);
        await saturate(target, target.gateway.child.pid, ctx, warm, uaOf(target));
      }
      for (const [r, order] of rotations(targets, ctx.options.rounds).entries()) {
        for (const target of order) {
          const result = await saturate(target, target.gateway.child.pid, ctx, ctx.options.durationS, uaOf(target));
          results.get(target.name)?.push(result);
          progress(`${NAME}: round ${r + 1}/${ctx.options.rounds} ${target.name}: ${formatInt(result.rps)} req/s, p99 ${result.latencyMs.p99} ms, ${Math.round(result.cpuUsPerRequest)} µs CPU/request, ${loadErrors(result)} errors`);
        }
      }
      tally = await onCluster.tally();
      await onCluster.stop();
      gateways.pop();
      // The run's records check drains the standalone queue only; this gateway's records are on
      // the cluster, and checked here.
      ctx.ledger.delete(`${NAME}/cluster`);
      landed = await drainCluster(ctx, cluster, tally.requests, tally.routed);
    } finally {
      for (const g of gateways) await g.stop().catch(() => {});
      await mock?.stop();
      clusterClient?.disconnect();
      await cluster.close();
    }
    const standalone = summariseTarget(results.get('standalone')!);
    const onCluster = summariseTarget(results.get('cluster')!);
    const vsStandalone = onCluster.medianRps / standalone.medianRps;
    const lost = tally.requests - landed.audit + (tally.routed - landed.usage);
    const rows: Row[] = [
      {
        figure: `req/s, median of ${ctx.options.rounds} × ${ctx.options.durationS} s, ${ctx.options.connections} conns (standalone / cluster)`,
        gateway: `${rps(standalone.medianRps)} / ${rps(onCluster.medianRps)}`,
        result: `cluster/standalone ${ratio(vsStandalone)}`,
        verdict: 'info',
      },
      {
        figure: 'CPU per request, gateway process (standalone / cluster)',
        gateway: `${us(standalone.medianCpuUsPerRequest)} / ${us(onCluster.medianCpuUsPerRequest)}`,
        result: `cluster/standalone ×${ratio(onCluster.medianCpuUsPerRequest / standalone.medianCpuUsPerRequest)}`,
        verdict: 'info',
      },
      {
        figure: 'latency p50 / p99 under load (standalone; cluster)',
        gateway: `${ms(standalone.medianP50Ms, 1)} / ${ms(standalone.medianP99Ms, 1)}; ${ms(onCluster.medianP50Ms, 1)} / ${ms(onCluster.medianP99Ms, 1)}`,
        result: '',
        verdict: 'info',
      },
      {
        figure: 'cluster records landed (audit events / usage records)',
        gateway: `${formatInt(landed.audit)} / ${formatInt(landed.usage)}`,
        result: `of ${formatInt(tally.requests)} / ${formatInt(tally.routed)}, drained in ${landed.seconds.toFixed(1)} s`,
        verdict: lost === 0 && tally.dropped === 0 ? 'pass' : 'miss',
      },
    ];
    return {
      errors: standalone.errors + onCluster.errors + Math.max(0, lost),
      rows,
      data: {
        connections: ctx.options.connections,
        durationS: ctx.options.durationS,
        rounds: ctx.options.rounds,
        targets: { standalone, cluster: onCluster },
        clusterVsStandalone: vsStandalone,
        clusterRecords: { expected: tally, landed },
      },
    };
  },
};

/** A writer on the cluster drains the cluster gateway's queue into a throwaway database. */
async function drainCluster(ctx: RunContext, cluster: RedisClusterHandle, requests: number, routed: number): Promise<{ audit: number; usage: number; seconds: number }> {
  const db = freshDatabase(ctx.options.databaseUrl, 'clusterrecords');
  await db.create();
  const writer = spawnNode('writer (cluster)', 'control-plane/dist/writer-main.js', [], {
    env: { DATABASE_URL: db.url, REDIS_CLUSTER_NODES: cluster.seeds, REDIS_PREFIX: ctx.prefix, WRITER_PORT: '0', LOG_LEVEL: 'info' },
  });
  const sql = connect(db.url);
  const started = Date.now();
  let audit = 0;
  let usage = 0;
  try {
    await waitForOutput(writer, /"msg":"writer started"/, 60_000);
    progress(`${NAME}: draining ${formatInt(requests)} audit events and ${formatInt(routed)} usage records from the cluster`);
    let last = -1;
    let lastChange = Date.now();
    for (;;) {
      const [row] = await sql<{ audit: number; usage: number }[]>`
        select (select coalesce(sum(count), 0) from audit_events where type in ('gateway.request', 'gateway.throttled'))::int as audit, (select count(*) from usage_records)::int as usage`;
      audit = row?.audit ?? 0;
      usage = row?.usage ?? 0;
      if (audit >= requests && usage >= routed) break;
      if (audit !== last) {
        last = audit;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > 30_000) {
        progress(`${NAME}: the cluster writer stalled at ${formatInt(audit)} of ${formatInt(requests)} audit events`);
        break;
      }
      await sleep(500);
    }
    return { audit, usage, seconds: (Date.now() - started) / 1000 };
  } finally {
    await sql.end({ timeout: 1 });
    await writer.stop('SIGTERM', 20_000).catch(() => {});
    await db.drop().catch(() => {});
  }
}

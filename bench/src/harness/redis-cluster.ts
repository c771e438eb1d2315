import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

/**
 * A real Redis Cluster for tests and the benchmark: six redis-server processes on private ports
 * (three masters, each with one replica), made a cluster with `redis-cli --cluster create`. A
 * short node timeout lets a replica take over a killed master within a few seconds.
 */
const run = promisify(execFile);

export interface ClusterNode {
  /** Fixed once the cluster is up (a node that could not bind its ports is moved at start). */
  port: number;
  /** The cluster bus port (set explicitly: the default, port + 10000, may not be free). */
  busPort: number;
  readonly running: boolean;
}

export interface RedisClusterHandle {
  nodes: ClusterNode[];
  /** `127.0.0.1:port,…` of every node, for REDIS_CLUSTER_NODES. */
  seeds: string;
  /** Ports of the nodes that are masters now, as the live nodes see it. */
  masters(): Promise<number[]>;
  /** The port of the master serving `key`'s slot. */
  masterOf(key: string): Promise<number>;
  /** Stops one node (SIGKILL by default: a crash, with no persistence its data is gone). */
  kill(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** Waits until a replica took over every slot of the killed master and the cluster is ok again. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One line of CLUSTER NODES: id, address, flags, master id, slots. */
interface NodeLine {
  port: number;
  flags: string[];
  slots: string[];
}

function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const parts = line.split(' ');
      return { port: Number(/:(\d+)@/.exec(parts[1] ?? '')?.[1]), flags: (parts[2] ?? '').split(','), slots: parts.slice(8) };
    });
}

export async function startRedisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-cluster-'));
  const nodeTimeout = options.nodeTimeoutMs ?? 1_000;
  const procs = new Map<number, ChildProcess>();
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < 6; i++) {
    const node: ClusterNode = {
      port: await freePort(),
      busPort: await freePort(),
      get running() {
        return procs.has(node.port);
      },
    };
    nodes.push(node);
  }
  const start = (node: ClusterNode) => {
    const args = [
      '--port', String(node.port), '--cluster-port', String(node.busPort), '--bind', '127.0.0.1',
      '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${node.port}.conf`),
      '--cluster-node-timeout', String(nodeTimeout), '--cluster-replica-validity-factor', '0',
      '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no',
    ];
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    live.add(proc);
    procs.set(node.port, proc);
    proc.once('exit', () => {
      live.delete(proc);
      if (procs.get(node.port) === proc) procs.delete(node.port);
    });
  };
  const stopAll = async () => {
    await Promise.all(
      [...procs.values()].map(
        (proc) =>
          new Promise<void>((resolve) => {
            proc.once('exit', () => resolve());
            proc.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (const node of nodes) start(node);
    for (const node of nodes) {
      // A port taken between the pick and the bind makes redis-server exit at once: pick again.
      for (let attempt = 0; ; attempt++) {
        await waitFor(async () => !node.running || (await redisCli(node.port, 'PING')).trim() === 'PONG', `cluster node ${node.port}`, 10_000);
        if (node.running) break;
        if (attempt === 3) throw new Error(`cluster node could not start on port ${node.port}`);
        node.port = await freePort();
        node.busPort = await freePort();
        start(node);
      }
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);
    for (const node of nodes) {
      await waitFor(async () => (await redisCli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'), `cluster_state:ok on ${node.port}`, 20_000);
    }
    // A replica that has not finished its first sync cannot take over its master.
    await waitFor(
      async () => {
        const lines = parseNodes(await redisCli(nodes[0]!.port, 'CLUSTER', 'NODES'));
        const replicas = lines.filter((l) => l.flags.includes('slave')).map((l) => l.port);
        if (replicas.length !== 3) return false;
        for (const port of replicas) if (!(await redisCli(port, 'INFO', 'replication')).includes('master_link_status:up')) return false;
        return true;
      },
      'replicas in sync',
      20_000,
    );
  } catch (err) {
    await stopAll();
    throw err;
  }

  let mastersBeforeKill: number[] = [];
  const anyLive = () => {
    const node = nodes.find((n) => n.running);
    if (node === undefined) throw new Error('no cluster node is running');
    return node.port;
  };
  const handle: RedisClusterHandle = {
    nodes,
    seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    async masters() {
      const lines = parseNodes(await redisCli(anyLive(), 'CLUSTER', 'NODES'));
      return lines.filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length > 0).map((l) => l.port);
    },
    async masterOf(key) {
      const slot = Number((await redisCli(anyLive(), 'CLUSTER', 'KEYSLOT', key)).trim());
      const lines = parseNodes(await redisCli(anyLive(), 'CLUSTER', 'NODES'));
      for (const line of lines) {
        if (!line.flags.includes('master') || line.flags.includes('fail')) continue;
        for (const range of line.slots) {
          const [from, to] = range.split('-').map(Number);
          if (slot >= from! && slot <= (to ?? from)!) return line.port;
        }
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    async kill(port, signal = 'SIGKILL') {
      const proc = procs.get(port);
      if (proc === undefined) return;
      mastersBeforeKill = await handle.masters();
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill(signal);
      await exited;
    },
    async waitForFailover(deadPort, timeoutMs = 30_000) {
      let promoted = 0;
      await waitFor(
        async () => {
          for (const node of nodes) {
            if (!node.running) continue;
            if (!(await redisCli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
          }
          const lines = parseNodes(await redisCli(anyLive(), 'CLUSTER', 'NODES'));
          const dead = lines.find((l) => l.port === deadPort);
          if (dead !== undefined && dead.slots.length > 0) return false;
          const masters = lines.filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length > 0);
          if (masters.length !== 3) return false;
          promoted = masters.find((m) => m.port !== deadPort && !mastersBeforeKill.includes(m.port))?.port ?? 0;
          return promoted !== 0;
        },
        `a replica to take over from ${deadPort}`,
        timeoutMs,
      );
      return promoted;
    },
    close: stopAll,
  };
  return handle;
}

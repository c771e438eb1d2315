import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../bench/src/harness/processes.js';
import { redisCli } from '../bench/src/harness/redis-cluster.js';

/**
 * A real Sentinel setup for tests: a master, one replica and three sentinels (quorum 2), all
 * redis-server processes on private ports. The sentinels call a master down after one second
 * without an answer, so a killed master is replaced within a few seconds.
 */
export interface RedisSentinelHandle {
  /** The name the sentinels monitor the master under (REDIS_SENTINEL_NAME). */
  name: string;
  /** `127.0.0.1:port,…` of the sentinels, for REDIS_SENTINELS. */
  sentinels: string;
  masterPort: number;
  replicaPort: number;
  /** The master's port as the sentinels report it now. */
  currentMaster(): Promise<number>;
  /** Stops a data node (SIGKILL by default). */
  kill(port: number, signal?: NodeJS.Signals): Promise<void>;
  /** Waits until the sentinels promoted another node than `deadPort` and it answers as master. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisSentinel(): Promise<RedisSentinelHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-sentinel-'));
  const name = 'gwmaster';
  const procs = new Map<number, ChildProcess>();
  const spawnServer = (port: number, args: string[]) => {
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    live.add(proc);
    procs.set(port, proc);
    proc.once('exit', () => {
      live.delete(proc);
      if (procs.get(port) === proc) procs.delete(port);
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

  const masterPort = await freePort();
  const replicaPort = await freePort();
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const data = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir];
  try {
    spawnServer(masterPort, ['--port', String(masterPort), ...data]);
    spawnServer(replicaPort, ['--port', String(replicaPort), '--replicaof', '127.0.0.1', String(masterPort), ...data]);
    await waitFor(async () => (await redisCli(replicaPort, 'INFO', 'replication')).includes('master_link_status:up'), 'the replica in sync', 20_000);
    for (const port of sentinelPorts) {
      // A sentinel rewrites its configuration file, so each has its own.
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      spawnServer(port, [conf, '--sentinel']);
    }
    for (const port of sentinelPorts) {
      // Each sentinel must know the replica and the other sentinels before it can fail over.
      await waitFor(
        async () => {
          const replicas = await redisCli(port, 'SENTINEL', 'REPLICAS', name);
          const others = await redisCli(port, 'SENTINEL', 'SENTINELS', name);
          return replicas.includes(String(replicaPort)) && sentinelPorts.filter((p) => p !== port).every((p) => others.includes(String(p)));
        },
        `sentinel ${port} to see the replica and its peers`,
        30_000,
      );
    }
  } catch (err) {
    await stopAll();
    throw err;
  }

  const currentMaster = async () => {
    for (const port of sentinelPorts) {
      if (!procs.has(port)) continue;
      const reply = (await redisCli(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).trim().split('\n');
      return Number(reply[1]);
    }
    throw new Error('no sentinel is running');
  };
  return {
    name,
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    masterPort,
    replicaPort,
    currentMaster,
    async kill(port, signal = 'SIGKILL') {
      const proc = procs.get(port);
      if (proc === undefined) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill(signal);
      await exited;
    },
    async waitForFailover(deadPort, timeoutMs = 30_000) {
      let promoted = 0;
      await waitFor(
        async () => {
          promoted = await currentMaster();
          if (promoted === deadPort) return false;
          return (await redisCli(promoted, 'INFO', 'replication')).includes('role:master');
        },
        `the sentinels to promote a replica of ${deadPort}`,
        timeoutMs,
      );
      return promoted;
    },
    close: stopAll,
  };
}

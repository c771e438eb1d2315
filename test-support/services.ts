import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from '../bench/src/harness/processes.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Private Redis and PostgreSQL servers for fault tests: each test starts its own on a spare port
 * so it can stop, kill and restart it without touching the shared servers other tests use.
 */
const run = promisify(execFile);

// A test process that dies without its afterAll must not leave servers behind.
const cleanups = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // best effort: the process is exiting
    }
  }
});

export { freePort };

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One PING over a raw socket: no client library, no reconnect logic in the way. */
function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('connect', () => socket.write('PING\r\n'));
  });
}

export interface PrivateRedis {
  port: number;
  url: string;
  readonly running: boolean;
  start(): Promise<void>;
  /** Stops the server (SIGTERM by default, SIGKILL for a crash); with no persistence its data is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stops and starts again on the same port: an empty Redis, as after a restart without persistence. */
  restart(downMs?: number): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== null;
    },
    async start() {
      if (child !== null) return;
      const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
        stdio: 'ignore',
      });
      child = proc;
      const cleanup = () => proc.kill('SIGKILL');
      cleanups.add(cleanup);
      proc.once('exit', () => {
        cleanups.delete(cleanup);
        if (child === proc) child = null;
      });
      await waitFor(() => redisPing(port), `redis-server on port ${port}`, 10_000);
    },
    async stop(signal = 'SIGTERM') {
      const proc = child;
      if (proc === null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill(signal);
      await exited;
      child = null;
    },
    async restart(downMs = 0) {
      await redis.stop('SIGKILL');
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await redis.start();
    },
  };
  await redis.start();
  return redis;
}

export interface PrivatePostgres {
  port: number;
  /** URL of the `postgres` maintenance database (for freshDatabaseUrl-style names, use urlFor). */
  baseUrl: string;
  urlFor(database: string): string;
  start(): Promise<void>;
  /** Fast shutdown: connections are cut, in-flight transactions roll back. */
  stop(): Promise<void>;
  /** Stops the server and removes its data directory. */
  destroy(): Promise<void>;
}

function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const path = join(root, version, 'bin', name);
    if (existsSync(path)) return path;
  }
  return name;
}

/** initdb and postgres refuse to run as root; as root, run them as the postgres account. */
async function asServerUser(file: string, args: string[]): Promise<void> {
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

async function serverUserIds(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A throwaway cluster made with initdb (trust auth, user postgres) on a spare port. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const root = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  const data = join(root, 'data');
  const ids = await serverUserIds();
  if (ids !== null) chownSync(root, ids.uid, ids.gid);
  await asServerUser(postgresBin('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  // fsync off: these clusters hold test data only, and a stop is always a clean shutdown.
  const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  let running = false;
  const pgCtl = postgresBin('pg_ctl');
  const emergencyStop = () => {
    const args = ['-D', data, '-m', 'immediate', 'stop'];
    try {
      if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'ignore' });
      else execFileSync(pgCtl, args, { stdio: 'ignore' });
    } catch {
      // already stopped
    }
    rmSync(root, { recursive: true, force: true });
  };
  cleanups.add(emergencyStop);
  const pg: PrivatePostgres = {
    port,
    baseUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      if (running) return;
      await asServerUser(pgCtl, ['-D', data, '-l', join(root, 'server.log'), '-o', serverOptions, '-w', '-t', '30', 'start']);
      running = true;
    },
    async stop() {
      if (!running) return;
      await asServerUser(pgCtl, ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
      running = false;
    },
    async destroy() {
      await pg.stop().catch(() => {});
      rmSync(root, { recursive: true, force: true });
      cleanups.delete(emergencyStop);
    },
  };
  try {
    await pg.start();
  } catch (err) {
    cleanups.delete(emergencyStop);
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return pg;
}

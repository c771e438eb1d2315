import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Every process the bench measures runs apart from the bench itself (DESIGN §6), so its CPU and
 * memory are its own. This module starts them, waits for them to listen, reads their RSS, and
 * makes sure none outlives the run.
 */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const OUTPUT_KEEP = 64 * 1024;
const children = new Set<ChildProcess>();

/** Kills every process this run started (and only those), at once. */
export function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

process.once('exit', killAll);

export interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  /** The last 64 KiB the process wrote to stdout and stderr. */
  output(): string;
  /** Signals the process and resolves with its exit code once it is gone. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  nodeArgs?: string[];
  /** Raise the soft open-files limit to the hard one first (sockets are files). */
  raiseFileLimit?: boolean;
}

export function spawnNode(name: string, script: string, args: string[] = [], options: SpawnOptions = {}): Child {
  const nodeArgv = [...(options.nodeArgs ?? []), script, ...args];
  const env = { ...process.env, ...options.env };
  // `exec` keeps the pid: the RSS read later is the node process's, not the shell's.
  const child = options.raiseFileLimit
    ? spawn('/bin/sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', process.execPath, ...nodeArgv], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, nodeArgv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  const keep = (d: Buffer) => {
    output += d.toString();
    if (output.length > OUTPUT_KEEP * 2) output = output.slice(-OUTPUT_KEEP);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  if (child.pid === undefined) throw new Error(`${name} could not be started`);
  return {
    name,
    pid: child.pid,
    process: child,
    output: () => output.slice(-OUTPUT_KEEP),
    stop: (signal = 'SIGTERM', timeoutMs = 15_000) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
        child.kill(signal);
      }),
  };
}

/** Resolves with the first match of `pattern` in the child's output; rejects if it exits first. */
export function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = child.output().match(pattern);
      if (match) {
        cleanup();
        resolve(match);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${child.name} exited (${code}) before it was ready:\n${child.output().slice(-4000)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.output().slice(-4000)}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.process.stdout?.off('data', check);
      child.process.stderr?.off('data', check);
      child.process.off('exit', onExit);
    };
    child.process.stdout?.on('data', check);
    child.process.stderr?.on('data', check);
    child.process.once('exit', onExit);
    check();
  });
}

/** Polls `url` until it answers 200. */
export async function waitForHttp(url: string, child: Child, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} exited (${child.process.exitCode}):\n${child.output().slice(-4000)}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.output().slice(-4000)}`);
    await sleep(50);
  }
}

/**
 * A port that was free a moment ago, picked below Linux's ephemeral range (32768–60999): a port the
 * kernel hands out for `listen(0)` can be taken as the local end of any outgoing connection before
 * the server it is meant for binds it, which made a test's redis-server fail to start now and then.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(candidate)) return candidate;
    if (attempt >= 50) return await kernelPort();
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process, from /proc (Linux), in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * CPU time (user + system) a process has used so far, in seconds. Unlike throughput, CPU time per
 * request barely moves when other work shares the machine, so it is the steadier efficiency figure.
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/** This process's open-files limits (inherited by the children it starts). */
export function fileLimits(): { soft: number; hard: number } {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
    const parse = (v: string | undefined) => (v === undefined || v === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(v));
    return { soft: parse(match?.[1]), hard: parse(match?.[2]) };
  } catch {
    return { soft: 1024, hard: 1024 };
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

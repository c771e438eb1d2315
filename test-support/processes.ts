import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Child processes for tests: the compiled mock upstream, proxies, writers. `npm test` builds
 * before it runs vitest, so dist/ is current.
 */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Child {
  process: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnNode(script: string, args: string[] = [], env: Record<string, string | undefined> = {}): Child {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return {
    process: child,
    output: () => output,
    kill: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** Resolves with the first match of `pattern` in the child's output, or rejects when it exits. */
export function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = child.output().match(pattern);
      if (match) {
        cleanup();
        resolve(match);
      }
    };
    const onExit = (code: number | null) => {
      check();
      cleanup();
      reject(new Error(`process exited (${code}) before printing ${pattern}:\n${child.output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${pattern}:\n${child.output()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.process.stdout?.off('data', check);
      child.process.stderr?.off('data', check);
      child.process.off('exit', onExit);
    };
    child.process.stdout?.on('data', check);
    child.process.stderr?.on('data', check);
    child.process.on('exit', onExit);
    check();
  });
}

/** Waits for a child to exit and returns its code. */
export function exitCode(child: Child): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.process.exitCode !== null) return resolve(child.process.exitCode);
    child.process.once('exit', (code) => resolve(code));
  });
}

export interface MockUpstreamProcess {
  baseUrl: string;
  port: number;
  stats(): Promise<{ requests: number; streams: number; aborted: number; completed: number; lastHeaders: Record<string, string>; lastBody: Record<string, unknown> }>;
  stop(): Promise<void>;
}

export async function spawnMockUpstream(env: Record<string, string> = {}): Promise<MockUpstreamProcess> {
  const child = spawnNode('bench/dist/mock-upstream-main.js', ['0'], env);
  const [, port] = await waitForOutput(child, /listening (\d+)/);
  const base = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${base}/v1`,
    port: Number(port),
    stats: async () => (await (await fetch(`${base}/__stats`)).json()) as Awaited<ReturnType<MockUpstreamProcess['stats']>>,
    stop: async () => {
      await child.kill('SIGTERM');
    },
  };
}

/** Polls `check` until it returns a truthy value (no fixed sleeps in tests). */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`never happened: ${what}${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

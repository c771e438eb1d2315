import { spawnNode as spawnProcess, waitForOutput, type Child as ProcessChild } from '../bench/src/harness/processes.js';

/**
 * Child processes for tests (the compiled mock upstream, proxies, writers), on the same helpers
 * the benchmarks use. `npm test` builds before it runs vitest, so dist/ is current.
 */
export { ROOT } from '../bench/src/harness/processes.js';
export { waitForOutput };

export interface Child extends ProcessChild {
  /** Signals the process and resolves with its exit code. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnNode(script: string, args: string[] = [], env: Record<string, string | undefined> = {}): Child {
  const child = spawnProcess(script, script, args, { env });
  return Object.assign(child, { kill: (signal: NodeJS.Signals = 'SIGTERM') => child.stop(signal) });
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
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`never happened: ${what}${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

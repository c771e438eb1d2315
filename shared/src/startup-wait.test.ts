import { describe, expect, it } from 'vitest';
import { StartupError } from './startup.js';
import { backoffDelay, PermanentStartupFailure, reasonOf, waitForDependency, waitMessage, type WaitStep } from './startup-wait.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

/** An attempt that fails `failures` times with ECONNREFUSED, then answers. */
function flaky(failures: number) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    attempt: async () => {
      calls++;
      if (calls <= failures) throw refused();
      return 'connected';
    },
  };
}

describe('waitForDependency', () => {
  it('retries until the dependency answers, one wait step per failure, password redacted', async () => {
    const steps: WaitStep[] = [];
    const target = flaky(3);
    const result = await waitForDependency('redis', 'redis://:s3cret@127.0.0.1:6379', target.attempt, {
      timeoutMs: 60_000,
      initialDelayMs: 1,
      maxDelayMs: 4,
      onWait: (step) => steps.push(step),
    });
    expect(result).toBe('connected');
    expect(target.calls).toBe(4);
    expect(steps.map((s) => [s.attempt, s.retryInMs, s.reason])).toEqual([
      [1, 1, 'ECONNREFUSED'],
      [2, 2, 'ECONNREFUSED'],
      [3, 4, 'ECONNREFUSED'],
    ]);
    expect(steps.every((s) => s.dependency === 'redis' && s.url === 'redis://:REDACTED@127.0.0.1:6379')).toBe(true);
    expect(JSON.stringify(steps)).not.toContain('s3cret');
    expect(waitMessage(steps[0]!)).toBe('waiting for Redis at redis://:REDACTED@127.0.0.1:6379 (ECONNREFUSED); attempt 1, next in 1 ms');
  });

  it('gives up at the deadline with the unreachable message and the last reason', async () => {
    const steps: WaitStep[] = [];
    const target = flaky(Number.POSITIVE_INFINITY);
    const failure = await waitForDependency('postgres', 'postgres://postgres:hunter2@db:5432/gateway', target.attempt, {
      timeoutMs: 30,
      initialDelayMs: 5,
      maxDelayMs: 5,
      onWait: (step) => steps.push(step),
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      'PostgreSQL is unreachable at postgres://postgres:REDACTED@db:5432/gateway (ECONNREFUSED). Start PostgreSQL (for example: pg_ctlcluster 15 main start) or set DATABASE_URL.',
    );
    expect(target.calls).toBeGreaterThan(1);
    expect(steps).toHaveLength(target.calls - 1);
    // No pause runs past the deadline.
    expect(steps.every((s) => s.retryInMs <= 5)).toBe(true);
  });

  it('makes a single attempt when the timeout is 0', async () => {
    const steps: WaitStep[] = [];
    const target = flaky(1);
    await expect(waitForDependency('redis', 'redis://127.0.0.1:1', target.attempt, { timeoutMs: 0, onWait: (s) => steps.push(s) })).rejects.toThrow(
      'Redis is unreachable at redis://127.0.0.1:1 (ECONNREFUSED)',
    );
    expect(target.calls).toBe(1);
    expect(steps).toEqual([]);
  });

  it('stops at once on a failure waiting cannot fix', async () => {
    let calls = 0;
    const attempt = async () => {
      calls++;
      throw new PermanentStartupFailure('28P01');
    };
    await expect(waitForDependency('postgres', 'postgres://postgres@127.0.0.1:5432/gateway', attempt, { timeoutMs: 60_000 })).rejects.toThrow(
      "PostgreSQL at postgres://postgres@127.0.0.1:5432/gateway refused the connection's credentials (28P01). Check the user and password in DATABASE_URL.",
    );
    expect(calls).toBe(1);
  });
});

describe('backoffDelay', () => {
  it('doubles from the first pause up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(n))).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect([1, 2, 3].map((n) => backoffDelay(n, 500, 30_000))).toEqual([500, 1_000, 2_000]);
  });
});

describe('reasonOf', () => {
  it('prefers the error code, then the message', () => {
    expect(reasonOf(refused())).toBe('ECONNREFUSED');
    expect(reasonOf(new Error('timed out'))).toBe('timed out');
    expect(reasonOf(null)).toBe('unknown error');
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { redactUrl } from './config/env.js';
import { refusedMessage, StartupError, unreachableMessage } from './startup.js';

/**
 * Waiting for Redis and PostgreSQL at start. Processes are started in any order (an orchestrator
 * starts them all at once, a host boots its services in parallel, a dependency restarts), so a
 * process that finds a dependency away retries with a growing pause, logging one line per pause,
 * and gives up with the unreachable message only after STARTUP_TIMEOUT_MS.
 */
export type Dependency = 'redis' | 'postgres';

/** One failed attempt that will be tried again: what a log line says about it. */
export interface WaitStep {
  dependency: Dependency;
  /** The dependency's URL with any password replaced. */
  url: string;
  attempt: number;
  reason: string;
  /** Since the first attempt. */
  waitedMs: number;
  retryInMs: number;
}

export interface StartupWait {
  /** Longest wait from the first attempt; 0 makes one attempt. */
  timeoutMs: number;
  /** First pause; each next one doubles, up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  onWait?: (step: WaitStep) => void;
}

/** Thrown by an attempt when trying again cannot help (a refused password): the wait ends at once. */
export class PermanentStartupFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PermanentStartupFailure';
  }
}

const INITIAL_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

/** The pause after `attempt` failed attempts (1-based), before the deadline is applied. */
export function backoffDelay(attempt: number, initialMs = INITIAL_DELAY_MS, maxMs = MAX_DELAY_MS): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(attempt - 1, 30));
}

const LABEL: Record<Dependency, string> = { redis: 'Redis', postgres: 'PostgreSQL' };

/** The log message of a wait step, e.g. "waiting for Redis at redis://host:6379 (ECONNREFUSED)". */
export function waitMessage(step: WaitStep): string {
  return `waiting for ${LABEL[step.dependency]} at ${step.url} (${step.reason}); attempt ${step.attempt}, next in ${step.retryInMs} ms`;
}

/**
 * Runs `attempt` until it resolves, pausing between failures, for at most `wait.timeoutMs`. The
 * last failure becomes a StartupError naming the dependency, its redacted URL and how to start it.
 */
export async function waitForDependency<T>(dependency: Dependency, url: string, attempt: () => Promise<T>, wait: StartupWait): Promise<T> {
  const started = Date.now();
  const deadline = started + wait.timeoutMs;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const reason = reasonOf(err);
      const left = deadline - Date.now();
      if (err instanceof PermanentStartupFailure) throw new StartupError(refusedMessage(dependency, url, reason));
      if (left <= 0) throw new StartupError(unreachableMessage(dependency, url, reason));
      const retryInMs = Math.min(left, backoffDelay(n, wait.initialDelayMs, wait.maxDelayMs));
      wait.onWait?.({ dependency, url: redactUrl(url), attempt: n, reason, waitedMs: Date.now() - started, retryInMs });
      await sleep(retryInMs);
    }
  }
}

/** The error's code (ECONNREFUSED, 57P03, …) when it has one, else its message. */
export function reasonOf(err: unknown): string {
  if (err instanceof PermanentStartupFailure) return err.reason;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && e.code !== '') return e.code;
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  return 'unknown error';
}

// connectRedis's signature is fixed and used everywhere, so the wait it applies is set once per
// process (each service's start sets it from its configuration). Until then: one attempt.
let processWait: StartupWait = { timeoutMs: 0 };

export function setStartupWait(wait: StartupWait): void {
  processWait = wait;
}

export function currentStartupWait(): StartupWait {
  return processWait;
}

/** The wait a service uses: its STARTUP_TIMEOUT_MS, and a warning per step on its logger. */
export function startupWaitFor(timeoutMs: number, log: { warn(obj: object, msg: string): void }): StartupWait {
  return { timeoutMs, onWait: (step) => log.warn(step, waitMessage(step)) };
}

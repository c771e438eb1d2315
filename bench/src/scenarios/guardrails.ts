import { performance } from 'node:perf_hooks';
import { STREAM_WINDOW_DEFAULT } from '@gateway/shared';
import { Masker, piiDetector, regexDetector, type Detector } from '@gateway/shared/guardrails';
import type { RunContext } from '../harness/context.js';
import { atMost, us, type Row } from '../harness/report.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * What guardrails cost the proxy's CPU, measured in process on the detectors the request path runs
 * (compiled once, as the proxy compiles a policy's list once):
 * - input: a regex guard (three RE2 patterns) and a pii guard (every entity) on a 4 KB prompt
 *   holding a few values to find, then masking them — CPU per request (target ≤ +50 µs);
 * - output stream: the check an output guard makes as a chunk arrives (the held window plus the
 *   chunk), i.e. the CPU it adds before a chunk can be released (target ≤ 1 ms). A stream's first
 *   chunk (the role chunk, no text) is released at once; text is released once the window
 *   (256 characters by default) follows it, which is the guard's design, not CPU.
 */
const FILLER = 'The quarterly report covers revenue, churn and the roadmap for the next two releases. ';

function prompt4k(): string {
  let text = 'Please summarise the thread below for ann.lee@example.com and call +1 415 555 2671 if anything is unclear. ';
  while (text.length < 3900) text += FILLER;
  return `${text}Card on file 4111 1111 1111 1111, ticket PROJ-4821, deploy key AKIAIOSFODNN7EXAMPLE.`.slice(0, 4096);
}

function cpuPerCall(iterations: number, work: () => void): number {
  for (let i = 0; i < Math.min(200, iterations); i++) work();
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

export const guardrails: Scenario = {
  name: 'guardrails',
  title: 'Guardrails: CPU of regex + pii on a 4 KB prompt, and of an output guard per stream chunk',
  async run(ctx: RunContext): Promise<ScenarioOutcome> {
    const iterations = sized(ctx, 20_000, 500);
    const text = prompt4k();
    const detectors: Detector[] = [
      regexDetector(['PROJ-[0-9]+', '(?i)project[- ]?(falcon|osprey)', 'internal[-_]only'], 'CODE'),
      piiDetector(['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'secret']),
    ];
    const input = cpuPerCall(iterations, () => {
      const masker = new Masker();
      let t = text;
      for (const detect of detectors) t = masker.apply(t, detect(t));
    });

    const window = text.slice(0, STREAM_WINDOW_DEFAULT);
    const chunk = ' and the next few words';
    const perChunk = cpuPerCall(iterations, () => {
      for (const detect of detectors) detect(window + chunk);
    });

    const started = performance.now();
    const rows: Row[] = [
      { figure: 'regex + pii on a 4 KB prompt (find and mask), CPU per request', result: us(input), target: '≤ +50 µs', verdict: atMost(input, 50) },
      { figure: `output guard check per stream chunk (window ${STREAM_WINDOW_DEFAULT} chars), CPU`, result: us(perChunk), target: '≤ 1,000 µs', verdict: atMost(perChunk, 1000) },
    ];
    return { errors: 0, rows, data: { input_us: input, per_chunk_us: perChunk, iterations, prompt_chars: text.length, elapsed_ms: performance.now() - started } };
  },
};

import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';

/**
 * The wall-clock breakdown of requests, for the bench (STEP_TIMES_FILE): each request marks the
 * moment each of its steps starts and the moments it hands bytes on (to the provider, to the
 * client), and the time between two marks is added to that segment's samples. Off unless set:
 * then no clock exists and the request path pays nothing but a null check per step.
 */
export class StepClock {
  readonly names: string[] = [];
  readonly at: number[] = [];

  constructor(start: number) {
    this.names.push('arrived');
    this.at.push(start);
  }

  mark(name: string): void {
    this.names.push(name);
    this.at.push(performance.now());
  }

  /** A step's start, under the step's function name (read once per step: the getter is slow). */
  markStep(step: (...args: never[]) => unknown): void {
    let name = STEP_NAMES.get(step);
    if (name === undefined) STEP_NAMES.set(step, (name = step.name || 'step'));
    this.mark(name);
  }
}

const STEP_NAMES = new WeakMap<object, string>();

/** Per segment, how long it took (µs): count, median, mean, 90th and 99th percentile. */
export interface SegmentSummary {
  segment: string;
  count: number;
  p50: number;
  mean: number;
  p90: number;
  p99: number;
}

export interface StepTimesFile {
  version: 1;
  requests: number;
  /** Segments in the order they first appeared (a request's path through the chain). */
  segments: SegmentSummary[];
}

/** Samples kept per segment; a bench window at concurrency 1 stays far below. */
const MAX_SAMPLES = 200_000;

export class StepTimes {
  private readonly segments = new Map<string, number[]>();
  private requests = 0;

  constructor(private readonly file: string) {}

  clock(start: number): StepClock {
    return new StepClock(start);
  }

  /** A finished request's timeline: each mark to the next is one segment. */
  add(clock: StepClock): void {
    this.requests++;
    const { names, at } = clock;
    for (let i = 1; i < names.length; i++) {
      const segment = `${names[i - 1]} → ${names[i]}`;
      let samples = this.segments.get(segment);
      if (samples === undefined) this.segments.set(segment, (samples = []));
      if (samples.length < MAX_SAMPLES) samples.push((at[i]! - at[i - 1]!) * 1000);
    }
  }

  summary(): StepTimesFile {
    return { version: 1, requests: this.requests, segments: [...this.segments].map(([segment, samples]) => summarise(segment, samples)) };
  }

  /** One file per thread (`<file>.<threadId>.json`): each worker is a data plane of its own. */
  write(): void {
    writeFileSync(`${this.file}.${threadId}.json`, JSON.stringify(this.summary()));
  }
}

function summarise(segment: string, samples: number[]): SegmentSummary {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { segment, count: sorted.length, p50: at(0.5), mean: sorted.length === 0 ? 0 : sum / sorted.length, p90: at(0.9), p99: at(0.99) };
}

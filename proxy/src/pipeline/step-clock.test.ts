import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { StepTimes, type StepTimesFile } from './step-clock.js';

const dir = mkdtempSync(join(tmpdir(), 'step-clock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A clock whose marks are placed at the given times (ms) instead of now. */
function timeline(times: StepTimes, marks: [string, number][]) {
  const clock = times.clock(marks[0]![1]);
  for (const [name, at] of marks.slice(1)) {
    clock.names.push(name);
    clock.at.push(at);
  }
  return clock;
}

describe('step clock', () => {
  it('adds each mark-to-mark span to its segment, in the order segments first appear, in µs', () => {
    const times = new StepTimes(join(dir, 'spans'));
    times.add(timeline(times, [['arrived', 0], ['parse', 0.01], ['provider.sent', 0.03], ['answered', 0.13]]));
    times.add(timeline(times, [['arrived', 1], ['parse', 1.02], ['provider.sent', 1.05], ['answered', 1.35]]));
    const summary = times.summary();
    expect(summary.requests).toBe(2);
    expect(summary.segments.map((s) => s.segment)).toEqual(['arrived → parse', 'parse → provider.sent', 'provider.sent → answered']);
    const [first, , last] = summary.segments;
    expect(first!.count).toBe(2);
    expect(first!.mean).toBeCloseTo(15, 6);
    expect(last!.p50).toBeCloseTo(300, 6);
    expect(last!.p99).toBeCloseTo(300, 6);
  });

  it('names a step by its function, and an unnamed one "step"', () => {
    const times = new StepTimes(join(dir, 'names'));
    const clock = times.clock(0);
    function authenticate(): void {}
    clock.markStep(authenticate);
    clock.markStep(authenticate);
    clock.markStep((() => () => {})());
    expect(clock.names).toEqual(['arrived', 'authenticate', 'authenticate', 'step']);
  });

  it('writes its summary to <file>.<thread>.json', () => {
    const file = join(dir, 'written');
    const times = new StepTimes(file);
    times.add(timeline(times, [['arrived', 0], ['answered', 0.2]]));
    times.write();
    const written = JSON.parse(readFileSync(`${file}.${threadId}.json`, 'utf8')) as StepTimesFile;
    expect(written).toMatchObject({ version: 1, requests: 1, segments: [{ segment: 'arrived → answered', count: 1 }] });
  });
});

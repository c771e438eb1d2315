import { describe, expect, it } from 'vitest';
import { JsonlSplitter } from './jsonl-splitter.js';

function split(chunks: (string | Buffer)[]): [string, number][] {
  const out: [string, number][] = [];
  const splitter = new JsonlSplitter((text, line) => out.push([text, line]));
  for (const chunk of chunks) splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  splitter.end();
  return out;
}

describe('JsonlSplitter', () => {
  it('cuts lines whatever the chunk borders, numbering them from 1', () => {
    expect(split(['{"a":1}\n{"b"', ':2}\r\n', '\n{"c":3}'])).toEqual([
      ['{"a":1}', 1],
      ['{"b":2}', 2],
      ['', 3],
      ['{"c":3}', 4],
    ]);
  });

  it('keeps a multi-byte character cut across chunks whole', () => {
    const bytes = Buffer.from('{"t":"é"}\n');
    expect(split([bytes.subarray(0, 7), bytes.subarray(7)])).toEqual([['{"t":"é"}', 1]]);
  });

  it('gives nothing more for a stream ending with a newline', () => {
    expect(split(['x\n'])).toEqual([['x', 1]]);
  });
});

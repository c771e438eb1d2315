import { describe, expect, it } from 'vitest';
import { jsonBytes } from './json-bytes.js';

describe('jsonBytes', () => {
  const cases: [string, unknown][] = [
    ['ASCII', { model: 'm', messages: [{ role: 'user', content: 'plain text, "quoted" and \\ escaped\n' }] }],
    ['two-byte characters', { text: 'café, naïve' }],
    ['three- and four-byte characters', { text: '日本語 and 🎉' }],
    ['a character parsed from a \\u escape', JSON.parse('{"text":"\\u00e9t\\u00e9"}')],
    ['a lone surrogate', { text: 'broken \ud800 pair' }],
    ['latin1-range characters', { text: '\u00ff\u0080' }],
  ];
  for (const [name, value] of cases) {
    it(`gives the bytes Buffer.from(JSON.stringify()) gives: ${name}`, () => {
      expect(jsonBytes(value).equals(Buffer.from(JSON.stringify(value)))).toBe(true);
    });
  }
});

import { RE2 } from 're2-wasm';
import type { Detector, Span } from './spans.js';

/**
 * Patterns users write run in RE2 (re2-wasm: Google's engine compiled to WebAssembly, no native
 * build): matching time is linear in the text whatever the pattern, so no prompt can make a
 * guardrail backtrack for seconds. RE2 refuses what it cannot run in linear time (backreferences,
 * lookaround), which is how such patterns are refused on write.
 */
export function compilePattern(pattern: string): RE2 {
  // `u`: code points, as the texts are JavaScript strings; `g`: every match.
  return new RE2(pattern, 'gu');
}

/** Why RE2 refuses the pattern, or null when it compiles. */
export function patternProblem(pattern: string): string | null {
  try {
    compilePattern(pattern);
    return null;
  } catch (err) {
    // RE2's message repeats the pattern with its flags ("/…/gu: invalid escape sequence: \1"): only the reason is kept.
    return err instanceof Error ? err.message.replace(/^Invalid regular expression: /, '').replace(/^\/.*\/[a-z]*: /s, '') : 'invalid pattern';
  }
}

/** A detector running every pattern over a text; matches are named `kind`. */
export function regexDetector(patterns: readonly string[], kind: string): Detector {
  // One alternation, one pass over the text (each call into RE2 copies the text into its memory).
  const compiled = [compilePattern(patterns.map((p) => `(?:${p})`).join('|'))];
  return (text) => {
    const out: Span[] = [];
    for (const re of compiled) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        const length = (m[0] as string).length;
        out.push({ start: m.index, end: m.index + length, kind });
        // An empty match must not hold the scan in place.
        if (length === 0) re.lastIndex++;
      }
    }
    return out;
  };
}

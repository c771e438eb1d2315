import { createRequire } from 'node:module';
import { RE2 as WasmRE2 } from 're2-wasm';
import type { Detector, Span } from './spans.js';

/**
 * Patterns users write run in RE2, Google's engine: matching time is linear in the text whatever
 * the pattern, so no prompt can make a guardrail backtrack for seconds. RE2 refuses what it cannot
 * run in linear time (backreferences, lookaround), which is how such patterns are refused on write.
 *
 * Two builds of the same engine: the native module `re2` (an optional dependency, compiled at
 * install where a C++ toolchain is present) scans a 4 KB prompt in about a microsecond, while
 * `re2-wasm` (WebAssembly, installs anywhere) marshals the whole text on every call and costs tens
 * to hundreds of microseconds. The native one is used when it loaded; `RE2_ENGINE` says which
 * (the proxy logs it at start).
 */
interface NativeMatch {
  index: number;
  0: Buffer;
}
interface NativeRE2 {
  lastIndex: number;
  exec(input: Buffer): NativeMatch | null;
}
type NativeConstructor = new (pattern: string, flags: string) => NativeRE2;

function loadNative(): NativeConstructor | null {
  try {
    return createRequire(import.meta.url)('re2') as NativeConstructor;
  } catch {
    return null;
  }
}

const Native = loadNative();

export type Re2Engine = 'native' | 'wasm';

/** Which build runs the patterns in this process. */
export const RE2_ENGINE: Re2Engine = Native === null ? 'wasm' : 'native';

/** Compiles `pattern` (global, code points) or throws RE2's reason. */
function compile(pattern: string, engine: Re2Engine): (text: string, kind: string) => Span[] {
  if (engine === 'native' && Native !== null) {
    const re = new Native(pattern, 'gu');
    return (text, kind) => nativeScan(re, text, kind);
  }
  const re = new WasmRE2(pattern, 'gu');
  return (text, kind) => wasmScan(re, text, kind);
}

/**
 * On the UTF-8 bytes, converted once (a string argument would be converted again on every call):
 * byte offsets are turned back into UTF-16 indexes only for matches, and only when the text is not
 * ASCII (where the two are the same).
 */
function nativeScan(re: NativeRE2, text: string, kind: string): Span[] {
  const bytes = Buffer.from(text, 'utf8');
  const ascii = bytes.length === text.length;
  const index = (byte: number) => (ascii ? byte : bytes.toString('utf8', 0, byte).length);
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(bytes); m !== null; m = re.exec(bytes)) {
    const start = m.index;
    const end = start + m[0].length;
    out.push({ start: index(start), end: index(end), kind });
    if (end === start) {
      // An empty match must not hold the scan in place; the next start is a character's first byte.
      let next = end + 1;
      while (next < bytes.length && (bytes[next]! & 0xc0) === 0x80) next++;
      if (next > bytes.length) break;
      re.lastIndex = next;
    }
  }
  return out;
}

/** re2-wasm counts `index` in code points: turned into UTF-16 units where the text has surrogate pairs. */
function wasmScan(re: WasmRE2, text: string, kind: string): Span[] {
  const out: Span[] = [];
  const astral = SURROGATE.test(text);
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const length = (m[0] as string).length;
    const start = astral ? utf16Index(text, m.index) : m.index;
    out.push({ start, end: start + length, kind });
    if (length === 0) re.lastIndex++;
  }
  return out;
}

const SURROGATE = /[\uD800-\uDFFF]/;

function utf16Index(text: string, codePoints: number): number {
  let i = 0;
  for (let n = 0; n < codePoints && i < text.length; n++) i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  return i;
}

/** Why RE2 refuses the pattern, or null when it compiles. */
export function patternProblem(pattern: string, engine: Re2Engine = RE2_ENGINE): string | null {
  try {
    compile(pattern, engine);
    return null;
  } catch (err) {
    // The message may repeat the pattern with its flags ("/…/gu: invalid escape sequence: \1"): only the reason is kept.
    return err instanceof Error ? err.message.replace(/^Invalid regular expression: /, '').replace(/^\/.*\/[a-z]*: /s, '') : 'invalid pattern';
  }
}

/** A detector running every pattern over a text; matches are named `kind`. */
export function regexDetector(patterns: readonly string[], kind: string, engine: Re2Engine = RE2_ENGINE): Detector {
  // One alternation, one pass over the text.
  const scan = compile(patterns.map((p) => `(?:${p})`).join('|'), engine);
  return (text) => scan(text, kind);
}

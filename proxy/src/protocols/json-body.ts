import { Errors, type GatewayError } from '@gateway/shared';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A request body as JSON, or a 400 that says where it went wrong: the parser's reason, with the
 * line and column of the fault, so that a hand-written curl body can be fixed
 * without guessing. The body itself is never quoted back.
 */
export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw Errors.bodyNotUtf8();
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw jsonSyntaxError((err as Error).message, text);
  }
}

/** V8's reason for a JSON.parse failure, reworded with a line and column, without the body. */
export function jsonSyntaxError(reason: string, text: string): GatewayError {
  if (text.trim() === '') return Errors.bodyEmpty();
  if (/Unexpected end of JSON input/.test(reason)) return Errors.bodyNotJson(`it ends (at line ${where(text, text.length)}) before the JSON is complete`);
  const at = /at position (\d+)/.exec(reason);
  if (at !== null) {
    const position = Number(at[1]);
    const why = reason.replace(/ in JSON at position \d+.*$/, '').replace(/ at position \d+.*$/, '');
    return Errors.bodyNotJson(`${lowerFirst(why)} at line ${where(text, position)}`);
  }
  // "Unexpected token 'x', "<the body>" is not valid JSON": V8 names the token, not where it is.
  const token = /^Unexpected token '(.)'/.exec(reason)?.[1];
  if (token !== undefined) {
    const position = outsideStrings(text, token);
    return Errors.bodyNotJson(position !== -1 ? `unexpected \`${token}\` at line ${where(text, position)}` : `unexpected \`${token}\``);
  }
  return Errors.bodyNotJson();
}

/** "3, column 14" for a character offset. */
function where(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `${line}, column ${end - lineStart + 1}`;
}

/** The first `ch` outside string literals: where a stray token stands. */
function outsideStrings(text: string, ch: string): number {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === ch) {
      return i;
    }
  }
  return -1;
}

function lowerFirst(s: string): string {
  return s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1);
}

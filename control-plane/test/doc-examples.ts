/**
 * Executable documentation: the curl examples of a markdown file, read in the fixed form the docs
 * describe ("How to read the examples" in docs/management-api.md):
 *
 *   ```sh
 *   curl -s -X POST "$GATEWAY/v1/projects" -H "Authorization: Bearer $TOKEN" \
 *     -H 'content-type: application/json' -d '{"name":"demo"}'
 *   ```
 *   ```json 201
 *   {"id": "…", "name": "demo", …}
 *   ```
 *   <!-- capture: PROJECT_ID=id -->
 *
 * or a line `→ 204` instead of the JSON block for an empty answer. A `sh` block that does not start
 * with `curl` is prose (setting variables, say) and is skipped. The curl command is read by a small
 * tokenizer for the shell forms the docs use: single quotes (literal), double quotes and bare words
 * (with $VAR and ${VAR}), adjacent pieces joined into one word, a backslash ending a line.
 */
export interface DocExample {
  file: string;
  /** 1-based line of the curl command, for messages. */
  line: number;
  command: string;
  status: number;
  /** The documented JSON answer; undefined for an empty one. */
  body?: unknown;
  /** A documented CSV answer (a ```csv <status> block): its header must match and its row count. */
  csv?: string;
  captures: { name: string; path: string }[];
}

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const FENCE = /^```(\w*)\s*(.*)$/;

export function parseDocExamples(markdown: string, file = 'doc'): DocExample[] {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  let i = 0;
  const fail = (at: number, why: string): never => {
    throw new Error(`${file}:${at + 1}: ${why}`);
  };
  /** The fenced block opening at `start`: its tag, info and text; `end` is the closing line. */
  const block = (start: number) => {
    const open = FENCE.exec(lines[start] ?? '');
    if (open === null) return null;
    let end = start + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end] as string)) end++;
    if (end >= lines.length) fail(start, 'unclosed code block');
    return { tag: open[1] as string, info: (open[2] as string).trim(), text: lines.slice(start + 1, end).join('\n'), end };
  };
  const skipBlank = (from: number) => {
    let at = from;
    while (at < lines.length && (lines[at] as string).trim() === '') at++;
    return at;
  };

  while (i < lines.length) {
    const opened = block(i);
    if (opened === null) {
      i++;
      continue;
    }
    if (opened.tag !== 'sh' || !/^\s*curl\s/.test(opened.text)) {
      i = opened.end + 1;
      continue;
    }
    const example: DocExample = { file, line: i + 2, command: opened.text, status: 0, captures: [] };
    let at = skipBlank(opened.end + 1);
    const empty = /^→\s*(\d{3})\s*$/.exec(lines[at] ?? '');
    const answer = empty === null ? block(at) : null;
    if (empty !== null) {
      example.status = Number(empty[1]);
      at++;
    } else if (answer !== null && answer.tag === 'json' && /^\d{3}$/.test(answer.info)) {
      example.status = Number(answer.info);
      try {
        example.body = JSON.parse(answer.text);
      } catch (err) {
        fail(at, `the documented answer is not JSON: ${(err as Error).message}`);
      }
      at = answer.end + 1;
    } else if (answer !== null && answer.tag === 'csv' && /^\d{3}$/.test(answer.info)) {
      example.status = Number(answer.info);
      example.csv = answer.text;
      at = answer.end + 1;
    } else {
      fail(at, 'a curl example must be followed by a ```json <status> or ```csv <status> block or a "→ <status>" line');
    }
    for (;;) {
      const next = skipBlank(at);
      const capture = /^<!--\s*capture:\s*(.*?)\s*-->\s*$/.exec(lines[next] ?? '');
      if (capture === null) break;
      for (const pair of (capture[1] as string).split(',')) {
        const m = /^\s*([A-Z][A-Z0-9_]*)=([\w.]+)\s*$/.exec(pair);
        if (m === null) fail(next, `capture "${pair.trim()}" is not NAME=path`);
        example.captures.push({ name: m?.[1] as string, path: m?.[2] as string });
      }
      at = next + 1;
    }
    examples.push(example);
    i = at;
  }
  return examples;
}

/** Splits a command into shell words, expanding $VAR and ${VAR} outside single quotes. */
export function shellWords(command: string, vars: Record<string, string>): string[] {
  const text = command.replace(/\\\n/g, ' ');
  const words: string[] = [];
  let word: string | null = null;
  const expand = (name: string) => {
    const value = vars[name];
    if (value === undefined) throw new Error(`$${name} is not set (set it, or capture it from an earlier answer)`);
    return value;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw new Error('unclosed single quote');
      word = (word ?? '') + text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let piece = '';
      for (; j < text.length && text[j] !== '"'; j++) {
        const d = text[j] as string;
        if (d === '\\' && /["\\$`]/.test(text[j + 1] ?? '')) piece += text[++j];
        else if (d === '$') {
          const [name, length] = variableAt(text, j);
          piece += expand(name);
          j += length - 1;
        } else piece += d;
      }
      if (j >= text.length) throw new Error('unclosed double quote');
      word = (word ?? '') + piece;
      i = j + 1;
    } else if (c === '$') {
      const [name, length] = variableAt(text, i);
      word = (word ?? '') + expand(name);
      i += length;
    } else if (c === '\\') {
      word = (word ?? '') + (text[i + 1] ?? '');
      i += 2;
    } else if (/[|&;<>()`]/.test(c)) {
      throw new Error(`"${c}" is beyond the shell the examples may use`);
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

function variableAt(text: string, at: number): [string, number] {
  const m = /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))/.exec(text.slice(at));
  if (m === null) throw new Error(`a lone "$" at "${text.slice(at, at + 10)}"`);
  return [(m[1] ?? m[2]) as string, m[0].length];
}

/** The request a curl command line makes, for the options the examples use. */
export function curlRequest(command: string, vars: Record<string, string>): CurlRequest {
  const words = shellWords(command, vars);
  if (words[0] !== 'curl') throw new Error('not a curl command');
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as string;
    const value = () => {
      const v = words[++i];
      if (v === undefined) throw new Error(`${word} needs a value`);
      return v;
    };
    switch (word) {
      case '-s':
      case '--silent':
        break;
      case '-X':
      case '--request':
        method = value();
        break;
      case '-H':
      case '--header': {
        const header = value();
        const colon = header.indexOf(':');
        if (colon <= 0) throw new Error(`header "${header}" has no name`);
        headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
        break;
      }
      case '-d':
      case '--data':
      case '--data-raw':
        body = value();
        break;
      default:
        if (word.startsWith('-')) throw new Error(`curl option ${word} is not one the examples may use`);
        if (url !== undefined) throw new Error(`two URLs: ${url} and ${word}`);
        url = word;
    }
  }
  if (url === undefined) throw new Error('no URL');
  // As curl does: -d means POST unless -X says otherwise, and a form content type unless -H says
  // otherwise; every request says who it is and takes any answer.
  if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  headers['user-agent'] ??= 'curl/8.5.0';
  headers.accept ??= '*/*';
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, ...(body === undefined ? {} : { body }) };
}

/**
 * Where the actual answer's shape departs from the documented one: the keys of every object,
 * recursively, and the JSON type of every value (null, boolean, number, string, array, object).
 * Values themselves (ids, times) vary and are not compared. Every element of an actual array is
 * held to the first documented element; a documented non-empty array must not come back empty.
 */
export function shapeDifferences(documented: unknown, actual: unknown, path = '$'): string[] {
  const type = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (type(documented) !== type(actual)) return [`${path}: documented ${type(documented)}, got ${type(actual)}`];
  if (Array.isArray(documented) && Array.isArray(actual)) {
    if (documented.length === 0) return [];
    if (actual.length === 0) return [`${path}: documented a non-empty array, got an empty one`];
    return actual.flatMap((item, i) => shapeDifferences(documented[0], item, `${path}[${i}]`));
  }
  if (type(documented) !== 'object') return [];
  const doc = documented as Record<string, unknown>;
  const act = actual as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(doc)) if (!(key in act)) problems.push(`${path}.${key}: documented, not in the answer`);
  for (const key of Object.keys(act)) if (!(key in doc)) problems.push(`${path}.${key}: in the answer, not documented`);
  for (const key of Object.keys(doc)) if (key in act) problems.push(...shapeDifferences(doc[key], act[key], `${path}.${key}`));
  return problems;
}

export interface Route {
  method: string;
  url: string;
}

/**
 * The route a request reaches, picked as the router picks it: a static segment wins over a
 * parameter in the same place, so `/v1/users/me/password` reaches its own route and does not also
 * count for `/v1/users/:user_id/password`.
 */
export function routeOf<R extends Route>(routes: readonly R[], method: string, path: string): R | undefined {
  const segments = path.split('/');
  const isParam = (segment: string) => segment.startsWith(':');
  const reaches = (url: string) => {
    const parts = url.split('/');
    return parts.length === segments.length && parts.every((part, i) => (isParam(part) ? segments[i] !== '' : part === segments[i]));
  };
  const staticFirst = (a: R, b: R) => {
    const x = a.url.split('/');
    const y = b.url.split('/');
    for (let i = 0; i < x.length; i++) if (isParam(x[i] as string) !== isParam(y[i] as string)) return isParam(x[i] as string) ? 1 : -1;
    return 0;
  };
  return routes.filter((r) => r.method === method && reaches(r.url)).sort(staticFirst)[0];
}

/** The value at a dotted path (`data.0.id`) of an answer, as a string for a shell variable. */
export function valueAt(answer: unknown, path: string): string {
  let value: unknown = answer;
  for (const part of path.split('.')) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`nothing to capture at "${path}"`);
  return String(value);
}

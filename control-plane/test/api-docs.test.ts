import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultProviders } from '@gateway/shared';
import { curlRequest, parseDocExamples, routeOf, shapeDifferences, shellWords, valueAt, type DocExample, type Route } from './doc-examples.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';

/**
 * The management API docs are executable: every curl example of every doc that has them runs, in
 * order, against a real control plane (a fresh one per doc), and the answer must have the
 * documented status and the documented shape. Together the docs must show every /v1 route.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS_DIR = join(ROOT, 'docs');
const MAIN_DOC = 'docs/management-api.md';

/**
 * Every doc written in the example form (it has an answer block tagged with a status), so a new one
 * (docs/accounts.md, say) runs without a change here; a doc with other curl lines (against the
 * proxy, say) and no such block is prose.
 */
const DOC_FILES = readdirSync(DOCS_DIR)
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
  .filter((file) => /^```json \d{3}\s*$/m.test(readFileSync(join(ROOT, file), 'utf8')))
  .sort((a, b) => (a === MAIN_DOC ? -1 : b === MAIN_DOC ? 1 : a.localeCompare(b)));

interface Ran {
  example: DocExample;
  method: string;
  path: string;
  answer: unknown;
}

const ran: Ran[] = [];
let routes: Route[] = [];

/** What the default install serves (no providers file, no provider keys): the examples must use only these. */
const DEFAULT_MODELS = defaultProviders({}).providers.flatMap((p) => p.models.map((m) => ({ model: m.id, provider: p.name })));
const SEEDED = DEFAULT_MODELS[0] as { model: string; provider: string };

/** What a proxy of the default install would have recorded, so the usage examples have pages to show. */
async function seedUsage(h: Harness): Promise<void> {
  const projectId = randomUUID();
  const keyId = randomUUID();
  const now = Date.now();
  const rows = [0, 1, 2].map((i) => ({
    ts: now - 60_000 * (3 - i),
    id: randomUUID(),
    request_id: `req_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    project_id: projectId,
    key_id: keyId,
    model: SEEDED.model,
    provider: SEEDED.provider,
    input_tokens: 12,
    output_tokens: 30,
    total_tokens: 42,
    // The offline mock reads no cache and has no price.
    cached_tokens: 0,
    cost_usd: null,
    latency_ms: 380,
    finish_reason: 'stop',
    stream: i === 2,
    endpoint: 'chat.completions',
  }));
  await h.sql`insert into usage_records ${h.sql(rows)}`;
}

async function run(h: Harness, example: DocExample, vars: Record<string, string>): Promise<Ran> {
  const where = `${example.file}:${example.line}`;
  let request;
  try {
    request = curlRequest(example.command, vars);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
  const res = await fetch(request.url, { method: request.method, headers: request.headers, ...(request.body === undefined ? {} : { body: request.body }) });
  const text = await res.text();
  expect(res.status, `${where}: ${request.method} ${request.url} answered ${res.status} ${text}`).toBe(example.status);
  let answer: unknown;
  if (example.csv !== undefined) {
    // Ids and times differ on every run: the header and the number of rows are the shape.
    expect(res.headers.get('content-type'), `${where}: a CSV answer`).toMatch(/^text\/csv/);
    const lines = (csv: string) => csv.split(/\r?\n/).filter((line) => line !== '');
    const documented = lines(example.csv);
    expect(lines(text)[0], `${where}: the CSV header differs from the docs`).toBe(documented[0]);
    expect(lines(text).length, `${where}: the CSV has another number of rows than the docs`).toBe(documented.length);
    answer = text;
  } else if (example.body === undefined) {
    expect(text, `${where}: documented an empty answer`).toBe('');
  } else {
    answer = JSON.parse(text);
    const problems = shapeDifferences(example.body, answer);
    if (problems.length > 0) throw new Error(`${where}: the answer differs from the docs:\n  ${problems.join('\n  ')}\nanswer: ${text}`);
  }
  for (const capture of example.captures) {
    try {
      vars[capture.name] = valueAt(answer, capture.path);
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`);
    }
  }
  return { example, method: request.method, path: new URL(request.url).pathname, answer };
}

it('filters only on models and providers the default install serves, so the examples work there as written', () => {
  const served = (name: string) => (value: string) => DEFAULT_MODELS.some((m) => m[name as 'model' | 'provider'] === value);
  const offending: string[] = [];
  for (const file of DOC_FILES) {
    for (const example of parseDocExamples(readFileSync(join(ROOT, file), 'utf8'), file)) {
      for (const [, name, value] of example.command.matchAll(/[?&](model|provider)=([^&"'\s]+)/g)) {
        if (!served(name as string)(value as string)) offending.push(`${file}:${example.line}: ${name}=${value}`);
      }
    }
  }
  expect(offending).toEqual([]);
});

it('never reads a cursor with a bare jq -r in a shell example, which prints a null as the text null', () => {
  const offending: string[] = [];
  for (const file of readdirSync(DOCS_DIR).filter((name) => name.endsWith('.md'))) {
    let inShell = false;
    readFileSync(join(DOCS_DIR, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/^```/.test(line)) inShell = !inShell && /^```(sh|bash|shell)\b/.test(line);
        else if (inShell && /jq -r\b[^|]*next_cursor/.test(line) && !/\/\/ empty/.test(line)) offending.push(`docs/${file}:${i + 1}`);
      });
  }
  expect(offending).toEqual([]);
});

it('finds the management API examples', () => {
  expect(DOC_FILES[0]).toBe(MAIN_DOC);
  expect(parseDocExamples(readFileSync(join(ROOT, MAIN_DOC), 'utf8'), MAIN_DOC).length).toBeGreaterThan(20);
});

describe.each(DOC_FILES)('%s', (file) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(`docs-${file.replace(/\W/g, '')}`);
    await seedUsage(h);
    routes = h.cp.app.routeTable;
  });
  afterAll(async () => h?.close());

  // Sign-ins and password changes hash at scrypt's production cost on purpose: a doc full of them takes a while.
  it('runs every example in order, with the documented status and answer', { timeout: 180_000 }, async () => {
    const examples = parseDocExamples(readFileSync(join(ROOT, file), 'utf8'), file);
    // What a reader sets before the first example (see "How to read the examples").
    const vars: Record<string, string> = { GATEWAY: h.base, ADMIN_EMAIL, ADMIN_PASSWORD };
    for (const example of examples) ran.push(await run(h, example, vars));
  });
});

it('shows every /v1 route of the management API at least once', () => {
  const shown = new Set(ran.map((x) => routeOf(routes, x.method, x.path)));
  const missing = routes
    .filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD')
    .filter((r) => !shown.has(r))
    .map((r) => `${r.method} ${r.url}`);
  expect(missing).toEqual([]);
});

it('fails on drift: a missing, renamed or extra field, or another type', () => {
  const created = ran.find((x) => x.method === 'POST' && x.path === '/v1/projects' && x.example.status === 201);
  expect(created).toBeDefined();
  const documented = created?.example.body as Record<string, unknown>;
  const answer = created?.answer;
  expect(shapeDifferences(documented, answer)).toEqual([]);
  const { quota_period: _dropped, ...missing } = documented;
  expect(shapeDifferences(missing, answer)).toEqual(['$.quota_period: in the answer, not documented']);
  const { name, ...rest } = documented;
  expect(shapeDifferences({ ...rest, title: name }, answer)).toEqual(['$.title: documented, not in the answer', '$.name: in the answer, not documented']);
  expect(shapeDifferences({ ...documented, rate_limits: { ...(documented.rate_limits as object), key_rpd: 1 } }, answer)).toEqual([
    '$.rate_limits.key_rpd: documented, not in the answer',
  ]);
  expect(shapeDifferences({ ...documented, quota_tokens: '100000' }, answer)).toEqual(['$.quota_tokens: documented string, got number']);
  const list = ran.find((x) => x.method === 'GET' && x.path === '/v1/projects');
  const listed = list?.example.body as { data: Record<string, unknown>[] };
  const { created_at: _c, ...withoutCreated } = listed.data[0] as Record<string, unknown>;
  expect(shapeDifferences({ data: [withoutCreated] }, list?.answer)[0]).toBe('$.data[0].created_at: in the answer, not documented');
});

describe('the example reader', () => {
  it('reads a curl example, its answer and its captures; refuses an example without an answer', () => {
    const doc = [
      'Text.',
      '```sh',
      'GATEWAY=http://127.0.0.1:8081',
      '```',
      '```sh',
      'curl -s -X POST "$GATEWAY/v1/projects" \\',
      "  -H 'content-type: application/json' -d '{\"name\":\"demo\"}'",
      '```',
      '',
      '```json 201',
      '{"id": "x", "name": "demo"}',
      '```',
      '<!-- capture: PROJECT_ID=id, NAME=name -->',
      '```sh',
      'curl -s -X DELETE "$GATEWAY/v1/projects/$PROJECT_ID"',
      '```',
      '→ 204',
    ].join('\n');
    const examples = parseDocExamples(doc, 'd.md');
    expect(examples).toMatchObject([
      { line: 6, status: 201, body: { id: 'x', name: 'demo' }, captures: [{ name: 'PROJECT_ID', path: 'id' }, { name: 'NAME', path: 'name' }] },
      { line: 15, status: 204, captures: [] },
    ]);
    expect(examples[1]?.body).toBeUndefined();
    expect(() => parseDocExamples('```sh\ncurl -s "$GATEWAY/v1/projects"\n```\nText.\n', 'd.md')).toThrow(/^d\.md:4: a curl example must be followed/);
    expect(() => parseDocExamples('```sh\ncurl -s "$GATEWAY/x"\n```\n```json 200\n{nope\n```\n', 'd.md')).toThrow(/^d\.md:4: the documented answer is not JSON/);
  });

  it('splits shell words as a shell would, for the quoting the docs use', () => {
    const vars = { GATEWAY: 'http://h:1', USER_ID: 'u-1', TOKEN: 't' };
    expect(shellWords(`curl -s "$GATEWAY/v1/x?a=1&b=\${USER_ID}" -H "Authorization: Bearer $TOKEN" -d '{"user_id":"'"$USER_ID"'","n":"$TOKEN"}'`, vars)).toEqual([
      'curl',
      '-s',
      'http://h:1/v1/x?a=1&b=u-1',
      '-H',
      'Authorization: Bearer t',
      '-d',
      '{"user_id":"u-1","n":"$TOKEN"}',
    ]);
    expect(() => shellWords('curl "$NOPE"', vars)).toThrow('$NOPE is not set');
    expect(() => shellWords('curl x | jq', vars)).toThrow(/beyond the shell/);
    expect(() => shellWords("curl 'open", vars)).toThrow(/unclosed/);
  });

  it('makes the request curl would make', () => {
    expect(curlRequest(`curl -s "$GATEWAY/v1/x" -d '{}'`, { GATEWAY: 'http://h' })).toEqual({
      method: 'POST',
      url: 'http://h/v1/x',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'curl/8.5.0', accept: '*/*' },
      body: '{}',
    });
    expect(curlRequest(`curl -X DELETE "$GATEWAY/v1/x" -H 'Content-Type: application/json'`, { GATEWAY: 'http://h' })).toEqual({
      method: 'DELETE',
      url: 'http://h/v1/x',
      headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.5.0', accept: '*/*' },
    });
    expect(() => curlRequest('curl -k https://h', {})).toThrow(/option -k/);
  });

  it('counts a request for the route the router gives it, static segments first', () => {
    const routes = [
      { method: 'POST', url: '/v1/users/:user_id/password' },
      { method: 'POST', url: '/v1/users/me/password' },
      { method: 'GET', url: '/v1/users/me' },
      { method: 'PATCH', url: '/v1/users/:user_id' },
    ];
    expect(routeOf(routes, 'POST', '/v1/users/me/password')?.url).toBe('/v1/users/me/password');
    expect(routeOf(routes, 'POST', '/v1/users/4b6f/password')?.url).toBe('/v1/users/:user_id/password');
    expect(routeOf(routes, 'PATCH', '/v1/users/me')?.url).toBe('/v1/users/:user_id');
    expect(routeOf(routes, 'GET', '/v1/users/4b6f')).toBeUndefined();
    expect(routeOf(routes, 'POST', '/v1/users//password')).toBeUndefined();
  });

  it('captures strings and numbers at a dotted path', () => {
    expect(valueAt({ data: [{ id: 'a' }], n: 3 }, 'data.0.id')).toBe('a');
    expect(valueAt({ n: 3 }, 'n')).toBe('3');
    expect(() => valueAt({ next_cursor: null }, 'next_cursor')).toThrow(/nothing to capture/);
  });
});

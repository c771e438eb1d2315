import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_PAGE_SIZE } from '../src/db/usage-export.js';
import { EXPORT_COLUMNS } from '../src/http/routes/usage-export.js';
import { startHarness, type Harness } from './harness.js';

/**
 * GET /v1/usage/export against a real control plane and PostgreSQL: every page of the filtered
 * records in one CSV, the list's access rules, and cells that are safe in a spreadsheet.
 */
let h: Harness;
let projectA: string;
let projectB: string;
let keyA: string;
let member: Awaited<ReturnType<Harness['createUser']>>;

const T0 = Date.UTC(2026, 0, 1);
/** More than two export pages, so the walk crosses page boundaries. */
const BULK = EXPORT_PAGE_SIZE * 2 + 317;

beforeAll(async () => {
  h = await startHarness('usageexport', { captureLogs: true });
  projectA = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'Billing, "EU"' } })).body.id;
  projectB = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'Other tenant' } })).body.id;
  keyA = (await h.api('POST', `/v1/projects/${projectA}/keys`, { token: h.adminToken, body: { name: 'backend' } })).body.id;
  member = await h.createUser('member');
  const added = await h.api('POST', `/v1/projects/${projectA}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'viewer' } });
  expect(added.status, added.text).toBe(201);

  const row = (i: number, projectId: string, model: string, extra: Record<string, unknown> = {}) => ({
    ts: T0 + i * 1000,
    id: randomUUID(),
    request_id: `req-${i}-${randomUUID()}`,
    project_id: projectId,
    key_id: keyA,
    model,
    provider: 'mock',
    input_tokens: 3,
    output_tokens: 5,
    total_tokens: 8,
    cached_tokens: 1,
    cost_usd: '0.0000195',
    latency_ms: 12,
    finish_reason: 'stop',
    provider_finish_reason: null,
    stream: i % 2 === 0,
    endpoint: 'chat.completions',
    ...extra,
  });
  const bulk = Array.from({ length: BULK }, (_, i) => row(i, projectA, 'mock-1'));
  for (let i = 0; i < bulk.length; i += 500) await h.sql`insert into usage_records ${h.sql(bulk.slice(i, i + 500))}`;
  await h.sql`insert into usage_records ${h.sql([
    row(BULK + 1, projectA, '=HYPERLINK("http://evil.test","click")', { provider_finish_reason: 'line one\nline two', cost_usd: null }),
    row(BULK + 2, projectB, 'secret-model'),
  ])}`;
});
afterAll(async () => h?.close());

/** RFC 4180, as a spreadsheet reads it: quoted fields may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error(`the CSV does not end with CRLF: ${JSON.stringify(text.slice(-40))}`);
  return rows;
}

async function exportCsv(query: string, token: string | null = h.adminToken) {
  const res = await fetch(`${h.base}/v1/usage/export${query}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { res, text, rows: res.status === 200 ? parseCsv(text) : [] };
}

const column = (name: (typeof EXPORT_COLUMNS)[number]) => EXPORT_COLUMNS.indexOf(name);

describe('GET /v1/usage/export', () => {
  it('streams every page of the records as a CSV download with a header row', async () => {
    const { res, rows } = await exportCsv(`?project_id=${projectA}&model=mock-1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-\d{4}-\d{2}-\d{2}T\d{4}Z\.csv"$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Streamed, not buffered into one body of known length.
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(rows[0]).toEqual([...EXPORT_COLUMNS]);
    const data = rows.slice(1);
    expect(data).toHaveLength(BULK);
    expect(new Set(data.map((r) => r[column('id')])).size).toBe(BULK);
    // Newest first, across page boundaries.
    const times = data.map((r) => Date.parse(r[column('timestamp')] as string));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(data[0]?.[column('timestamp')]).toBe(new Date(T0 + (BULK - 1) * 1000).toISOString());
    expect(data[0]).toMatchObject({
      [column('project_name')]: 'Billing, "EU"',
      [column('key_name')]: 'backend',
      [column('cost_usd')]: '0.0000195000',
      [column('total_tokens')]: '8',
    });
  });

  it('applies the filters of GET /v1/usage: time range, order, model', async () => {
    const from = T0 + 10_000;
    const to = T0 + 20_000;
    const { rows } = await exportCsv(`?project_id=${projectA}&from=${from}&to=${to}&order_asc=timestamp`);
    const times = rows.slice(1).map((r) => Date.parse(r[column('timestamp')] as string));
    expect(times).toEqual(Array.from({ length: 10 }, (_, i) => from + i * 1000));

    const none = await exportCsv(`?project_id=${projectA}&model=no-such-model`);
    expect(none.text).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);

    const bad = await exportCsv(`?project_id=${projectA}&from=${to}&to=${from}`);
    expect(bad.res.status).toBe(400);
    expect(JSON.parse(bad.text).error.param).toBe('from');
    const unknown = await exportCsv('?limit=5');
    expect(unknown.res.status).toBe(400);
  });

  it('keeps cells a spreadsheet would run as formulas as text, and line breaks inside their cell', async () => {
    const { rows } = await exportCsv(`?project_id=${projectA}&from=${T0 + (BULK + 1) * 1000}`);
    expect(rows).toHaveLength(2);
    const row = rows[1] as string[];
    expect(row[column('model')]).toBe(`'=HYPERLINK("http://evil.test","click")`);
    expect(row[column('provider_finish_reason')]).toBe('line one\nline two');
    expect(row[column('cost_usd')]).toBe('');
  });

  it('names the model a request asked for when an alias served another', async () => {
    const id = randomUUID();
    await h.sql`insert into usage_records ${h.sql([{ ts: T0, id, request_id: `req-alias-${id}`, project_id: projectA, key_id: keyA, model: 'served-model', requested_model: 'claude-asked', provider: 'mock', input_tokens: 1, output_tokens: 1, total_tokens: 2, cached_tokens: 0, cost_usd: null, latency_ms: 1, finish_reason: 'stop', provider_finish_reason: null, stream: false, endpoint: 'messages' }])}`;
    try {
      const { rows } = await exportCsv(`?project_id=${projectA}&model=served-model`);
      expect(rows).toHaveLength(2);
      expect(rows[1]?.[column('model')]).toBe('served-model');
      expect(rows[1]?.[column('requested_model')]).toBe('claude-asked');
    } finally {
      await h.sql`delete from usage_records where id = ${id}`;
    }
  });

  it('names the batch a request was a line of, and takes the batch_id filter of the list', async () => {
    const ids = [randomUUID(), randomUUID()];
    const rows = ids.map((id, i) => ({ ts: T0 + i, id, request_id: `req-batch-${id}`, project_id: projectA, key_id: keyA, model: 'batch-model', batch_id: 'batch_0192f3a45b6c', provider: 'mock', input_tokens: 1, output_tokens: 1, total_tokens: 2, cached_tokens: 0, cost_usd: null, latency_ms: 1, finish_reason: 'stop', provider_finish_reason: null, stream: false, endpoint: 'chat.completions' }));
    await h.sql`insert into usage_records ${h.sql(rows)}`;
    try {
      const { rows: csv } = await exportCsv(`?project_id=${projectA}&batch_id=batch_0192f3a45b6c`);
      expect(csv[0]?.at(-1)).toBe('batch_id');
      expect(csv.slice(1).map((r) => r[column('id')]).sort()).toEqual([...ids].sort());
      expect(csv.slice(1).map((r) => r[column('batch_id')])).toEqual(['batch_0192f3a45b6c', 'batch_0192f3a45b6c']);
      // Other requests' cells are empty.
      const { rows: plain } = await exportCsv(`?project_id=${projectA}&from=${T0 + (BULK + 1) * 1000}`);
      expect(plain[1]?.[column('batch_id')]).toBe('');
    } finally {
      await h.sql`delete from usage_records where id = any(${ids}::uuid[])`;
    }
  });

  it('shows a member only their projects, and a foreign project as not found', async () => {
    const foreign = await exportCsv(`?project_id=${projectB}`, member.token);
    expect(foreign.res.status).toBe(404);
    expect(JSON.parse(foreign.text).error.code).toBe('NOT_FOUND');
    expect(foreign.text).not.toContain('secret-model');

    const mine = await exportCsv('', member.token);
    expect(mine.rows.slice(1)).toHaveLength(BULK + 1);
    expect(mine.rows.slice(1).every((r) => r[column('project_id')] === projectA)).toBe(true);

    const admin = await exportCsv('');
    expect(admin.rows.slice(1)).toHaveLength(BULK + 2);

    const outsider = await h.createUser('member');
    const empty = await exportCsv('', outsider.token);
    expect(empty.text).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);

    const anonymous = await exportCsv(`?project_id=${projectA}`, null);
    expect(anonymous.res.status).toBe(401);
  });
});

describe('download links: POST /v1/usage/export/links', () => {
  async function link(token: string): Promise<string> {
    const res = await h.api('POST', '/v1/usage/export/links', { token });
    expect(res.status, res.text).toBe(201);
    expect(res.body.expires_in).toBe(60);
    expect(res.body.url).toMatch(/^\/v1\/usage\/export\/download\?ticket=[\w-]+\.[\w-]+\.[\w-]+$/);
    return res.body.url;
  }
  const follow = (url: string, query = '', headers: Record<string, string> = {}) => fetch(`${h.base}${url}${query}`, { headers });

  it('downloads the export with the filters and access of the caller, without an Authorization header, streamed', async () => {
    const url = await link(member.token);
    const res = await follow(url, `&project_id=${projectA}&model=mock-1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-.*\.csv"$/);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const rows = parseCsv(await res.text());
    expect(rows[0]).toEqual([...EXPORT_COLUMNS]);
    expect(rows.slice(1)).toHaveLength(BULK);
    // The member's own access: another tenant's project is not found.
    const foreign = await follow(url, `&project_id=${projectB}`);
    expect(foreign.status).toBe(404);
  });

  it('refuses a link without a valid ticket, a ticket used as a bearer token, and a token used as a ticket', async () => {
    const url = await link(h.adminToken);
    const ticket = new URL(url, h.base).searchParams.get('ticket') as string;
    expect((await follow('/v1/usage/export/download')).status).toBe(400);
    expect((await follow(`/v1/usage/export/download?ticket=${ticket.slice(0, -2)}xx`)).status).toBe(401);
    expect((await follow(`/v1/usage/export/download?ticket=${h.adminToken}`)).status).toBe(401);
    expect((await follow('/v1/usage/export', '', { authorization: `Bearer ${ticket}` })).status).toBe(401);
    expect((await h.api('POST', '/v1/usage/export/links', { token: null })).status).toBe(401);
  });

  it("ends with the session: a signed-out session's link is refused", async () => {
    const user = await h.createUser('admin');
    const url = await link(user.token);
    expect((await h.api('POST', '/v1/signouts', { token: user.token })).status).toBe(204);
    const res = await follow(url);
    expect(res.status).toBe(401);
  });

  it('keeps the ticket out of the log', async () => {
    const url = await link(h.adminToken);
    await (await follow(url, `&project_id=${projectB}`)).text();
    const ticket = new URL(url, h.base).searchParams.get('ticket') as string;
    const logs = h.logs.join('');
    expect(logs).toContain('/v1/usage/export/download?ticket=[REDACTED]');
    expect(logs).not.toContain(ticket);
  });
});

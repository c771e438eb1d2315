import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('openapi');
});
afterAll(async () => h?.close());

type Operation = { security?: unknown[]; responses: Record<string, unknown>; parameters?: { name: string; in: string }[]; requestBody?: unknown };

/** Fastify's `/v1/projects/:id` is OpenAPI's `/v1/projects/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

it('describes every /v1 route, and nothing else, as OpenAPI 3.1', async () => {
  const res = await h.api('GET', '/openapi.json');
  expect(res.status).toBe(200);
  const doc = res.body as { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
  expect(doc.openapi).toBe('3.1.0');

  const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  const registered = h.cp.app.routeTable
    .filter((r) => r.url.startsWith('/v1/') && r.method !== 'HEAD')
    .map((r) => `${r.method} ${openApiPath(r.url)}`);
  expect(documented.sort()).toEqual([...new Set(registered)].sort());
  // The operational endpoints exist but are not API.
  expect(h.cp.app.routeTable.map((r) => r.url)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/openapi.json']));

  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const where = `${method} ${path}`;
      // Every success and error response is described (single sign-on answers a browser with redirects).
      const success = path.startsWith('/v1/signins/oidc') ? /^30[23]$/ : /^2\d\d$/;
      expect(Object.keys(op.responses).some((s) => success.test(s)), where).toBe(true);
      expect(op.responses['4XX'], where).toBeDefined();
      // Path parameters are declared.
      for (const name of path.match(/\{(\w+)\}/g) ?? []) {
        expect(op.parameters?.some((p) => p.in === 'path' && `{${p.name}}` === name), `${where} ${name}`).toBe(true);
      }
      // Signing in (by password, or by single sign-on) is the one thing done without a bearer token.
      if (path === '/v1/signins' || path.startsWith('/v1/signins/')) expect(op.security, where).toEqual([]);
      else expect(op.security, where).toBeUndefined();
    }
  }
  expect(Object.keys(doc.components.schemas)).toEqual(
    expect.arrayContaining(['ErrorBody', 'Token', 'User', 'Project', 'ApiKey', 'NewApiKey', 'Member', 'UsageRecord', 'AuditEvent', 'UsageSummary']),
  );
  expect(doc.paths['/v1/usage']?.get?.parameters?.map((p) => p.name)).toEqual(
    expect.arrayContaining(['project_id', 'limit', 'order_desc', 'order_asc', 'cursor', 'key_id', 'model', 'provider', 'finish_reason', 'endpoint', 'batch_id', 'from', 'to']),
  );
  expect(doc.paths['/v1/audit']?.get?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['outcome', 'type', 'endpoint', 'tag', 'end_user', 'batch_id']));
  expect(doc.paths['/v1/usage/summary']?.get?.parameters?.map((p) => p.name).sort()).toEqual(
    ['project_id', 'key_id', 'model', 'provider', 'finish_reason', 'endpoint', 'tag', 'end_user', 'from', 'to', 'group_by'].sort(),
  );
});

it('describes the record fields of batch version 2 and the usage summary', async () => {
  const doc = (await h.api('GET', '/openapi.json')).body;
  type Schema = { required: string[]; properties: Record<string, { type?: unknown; enum?: unknown[]; required?: string[]; items?: Schema; properties?: Record<string, unknown> }> };
  const schemas = doc.components.schemas as Record<string, Schema>;
  const usage = schemas.UsageRecord!;
  expect(usage.required).toEqual(expect.arrayContaining(['cost_usd', 'endpoint', 'provider_finish_reason']));
  expect(usage.properties.tokens?.required).toEqual(['input', 'output', 'total', 'cached', 'cache_write']);
  expect(usage.properties.cost_usd?.type).toEqual(['number', 'null']);
  expect(usage.properties.finish_reason?.enum).toContain('other');
  expect(usage.properties.endpoint?.enum).toEqual(['chat.completions', 'messages', 'messages.count_tokens', 'responses', 'embeddings', 'mcp']);
  const audit = schemas.AuditEvent!;
  expect(audit.required).toEqual(expect.arrayContaining(['endpoint', 'attempts', 'providers']));
  expect(audit.properties.providers?.type).toBe('array');
  expect(audit.properties.endpoint?.enum).toEqual(['chat.completions', 'messages', 'messages.count_tokens', 'responses', 'embeddings', 'mcp', null]);
  expect(audit.properties.mcp?.type).toEqual(['object', 'null']);
  for (const record of [usage, audit]) {
    expect(record.required).toContain('batch_id');
    expect(record.properties.batch_id?.type).toEqual(['string', 'null']);
  }
  const summary = schemas.UsageSummary!;
  expect(summary.required).toEqual(['data', 'totals']);
  expect(Object.keys(summary.properties.data?.items?.properties ?? {})).toEqual(['project', 'model', 'provider', 'key', 'endpoint', 'end_user', 'tag', 'requests', 'tokens', 'cost_usd']);
  expect(doc.paths['/v1/usage/summary'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UsageSummary' });
  const groupBy = doc.paths['/v1/usage/summary'].get.parameters.find((p: { name: string }) => p.name === 'group_by');
  expect(groupBy.schema).toMatchObject({ pattern: '^(project|model|provider|key|endpoint|end_user|tag:[a-z0-9_.-]{1,32})$', default: 'model' });
});

it('says that only the creation of a key carries its secret', async () => {
  const doc = (await h.api('GET', '/openapi.json')).body;
  const schemas = doc.components.schemas as Record<string, { properties: Record<string, unknown> }>;
  expect(Object.keys(schemas.NewApiKey?.properties ?? {})).toContain('key');
  expect(Object.keys(schemas.ApiKey?.properties ?? {})).not.toContain('key');
  expect(JSON.stringify(doc)).not.toContain('key_hash');
});

it('answers every account route with the one shared User schema, disabled included', async () => {
  const doc = (await h.api('GET', '/openapi.json')).body;
  const user = doc.components.schemas.User as { required: string[]; properties: Record<string, { type: string }> };
  expect(user.required).toEqual(['id', 'email', 'role', 'disabled', 'created_at']);
  expect(user.properties.disabled?.type).toBe('boolean');
  const userRef = { $ref: '#/components/schemas/User' };
  const answer = (path: string, method: string, status: string) => doc.paths[path]?.[method]?.responses?.[status]?.content?.['application/json']?.schema;
  expect(answer('/v1/users', 'post', '201')).toEqual(userRef);
  expect(answer('/v1/users/me', 'get', '200')).toEqual(userRef);
  expect(answer('/v1/users/{user_id}', 'patch', '200')).toEqual(userRef);
  expect(answer('/v1/users', 'get', '200')?.properties?.data?.items).toEqual(userRef);
  // One definition: no account shape spelled out inline anywhere else.
  const inlineAccounts = JSON.stringify(doc.paths).match(/"disabled":\{"type":"boolean"/g) ?? [];
  expect(inlineAccounts).toHaveLength(1); // the PATCH body's field, not an answer
});

it("describes a project's batches with one Batch schema, and their output and error lines as JSON lines", async () => {
  const doc = (await h.api('GET', '/openapi.json')).body;
  const batch = doc.components.schemas.Batch as { required: string[]; properties: Record<string, { type?: unknown; format?: string }> };
  expect(batch.required).toEqual(expect.arrayContaining(['id', 'api', 'endpoint', 'status', 'request_counts', 'key_id', 'output_file_id', 'error_file_id', 'metadata', 'reason', 'created_at', 'expires_at']));
  expect(batch.properties.created_at).toMatchObject({ type: 'string', format: 'date-time' });
  expect(batch.properties.completed_at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
  const batchRef = { $ref: '#/components/schemas/Batch' };
  const op = (path: string) => doc.paths[path]?.get;
  expect(op('/v1/projects/{id}/batches').tags).toEqual(['batches']);
  expect(op('/v1/projects/{id}/batches').parameters.map((p: { name: string }) => p.name).sort()).toEqual(['after', 'api', 'id', 'limit']);
  expect(op('/v1/projects/{id}/batches').responses['200'].content['application/json'].schema.properties.data.items).toEqual(batchRef);
  expect(op('/v1/projects/{id}/batches/{batch_id}').responses['200'].content['application/json'].schema).toEqual(batchRef);
  for (const which of ['output', 'errors']) {
    const answer = op(`/v1/projects/{id}/batches/{batch_id}/${which}`).responses['200'];
    expect(Object.keys(answer.content)).toEqual(['application/jsonl']);
  }
  expect(doc.tags.map((t: { name: string }) => t.name)).toContain('batches');
});

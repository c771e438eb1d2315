import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * GET /v1/models and GET /v1/gateway: what the dashboard offers when a project's allow-list is
 * edited, and the address its client examples use, from the control plane's own configuration.
 */
let h: Harness;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-info-'));
  const file = join(dir, 'providers.yaml');
  // A credential variable the control plane does not have: it reads the names only.
  writeFileSync(
    file,
    `providers:
  - name: east
    type: azure
    base_url: https://east.example.test
    api_key: \${EAST_KEY_NOT_SET}
    models: [{ id: fast, upstream: gpt-4o-mini, price: { input: 0.15, output: 0.6 } }, smart]
  - name: local
    type: mock
    models: [fast, mock-1]
`,
  );
  h = await startHarness('gateway-info', { env: { GATEWAY_CONFIG: file, PUBLIC_GATEWAY_URL: 'https://gateway.example.test/' } });
});
afterAll(async () => h?.close());

it('lists the models of the providers file with the providers serving each, to any signed-in account', async () => {
  const member = await h.createUser('member');
  const res = await h.api('GET', '/v1/models', { token: member.token });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    data: [
      { id: 'fast', providers: ['east', 'local'] },
      { id: 'smart', providers: ['east'] },
      { id: 'mock-1', providers: ['local'] },
    ],
  });
  expect(res.text).not.toContain('EAST_KEY');
  expect((await h.api('GET', '/v1/models')).status).toBe(401);
});

it("serves the gateway's public address without a trailing slash", async () => {
  const res = await h.api('GET', '/v1/gateway', { token: h.adminToken });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ public_url: 'https://gateway.example.test' });
  expect((await h.api('GET', '/v1/gateway')).status).toBe(401);
});

it('refuses to start on a providers file it cannot read, naming the variable', async () => {
  await expect(startHarness('gateway-info-bad', { env: { GATEWAY_CONFIG: join(dir, 'missing.yaml') } })).rejects.toThrow(/GATEWAY_CONFIG: cannot read/);
});

it('answers a model request sent to the management API with where the gateway listens', async () => {
  const res = await h.api('POST', '/v1/chat/completions', { body: { model: 'fast', messages: [{ role: 'user', content: 'hi' }] } });
  expect(res.status).toBe(404);
  const message = (res.body as { error: { message: string; code: string } }).error;
  expect(message.code).toBe('NOT_FOUND');
  expect(message.message).toContain('https://gateway.example.test/v1');
  expect((await h.api('POST', '/v1/messages', { body: {} })).text).toContain('https://gateway.example.test');
  // Any other unknown path keeps the plain answer.
  expect((await h.api('GET', '/v1/nothing-here', { token: h.adminToken })).text).toContain('No route for GET /v1/nothing-here');
});

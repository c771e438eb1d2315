import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

/**
 * A body nested deeper than any management request needs is refused with a 400 before anything
 * walks it: before, a few hundred thousand brackets (well under the 1 MiB body limit) overflowed
 * the stack of the code that walks the parsed body, and the answer was a 500.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('nested-json');
});
afterAll(async () => h?.close());

const deep = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('deeply nested JSON', () => {
  it('is a 400 on the sign-in route, without a token', async () => {
    for (const body of [deep(200_000), deepObject(100_000), `{"grant_type":"password","email":${deep(100_000)}}`]) {
      const res = await h.api('POST', '/v1/signins', { rawBody: body });
      expect(res.status, res.text.slice(0, 200)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/nested deeper than 64/) });
    }
  });

  it('is a 400 on every management route that takes a body', async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'nested' } });
    for (const [method, path] of [
      ['POST', '/v1/projects'],
      ['PATCH', `/v1/projects/${project.body.id}`],
      ['POST', `/v1/projects/${project.body.id}/keys`],
      ['POST', '/v1/users'],
      ['POST', '/v1/users/me/password'],
      ['POST', `/v1/projects/${project.body.id}/webhooks`],
    ] as const) {
      const res = await h.api(method, path, { token: h.adminToken, rawBody: `{"name":${deepObject(150_000)}}` });
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(400);
    }
  });

  it('leaves ordinary nesting alone', async () => {
    const res = await h.api('POST', '/v1/projects', { token: h.adminToken, rawBody: JSON.stringify({ name: 'fine', rate_limits: { key_rpm: 5 }, allowed_models: ['a'] }) });
    expect(res.status, res.text).toBe(201);
  });
});

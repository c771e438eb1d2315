import { describe, expect, it } from 'vitest';
import { AUDIT_OUTCOMES, FINISH_REASONS, GATEWAY_ENDPOINTS } from '@gateway/shared';
import { PROJECT_ROLES as SERVER_ROLES } from '../../src/auth/permissions.js';
import { ApiError } from '../../dashboard/src/api/api-error.js';
import { createApiClient } from '../../dashboard/src/api/client.js';
import * as types from '../../dashboard/src/api/types.js';

describe('the dashboard agrees with the server', () => {
  it('on the enumerations it offers as filters and roles', () => {
    expect([...types.FINISH_REASONS]).toEqual([...FINISH_REASONS]);
    expect([...types.AUDIT_OUTCOMES]).toEqual([...AUDIT_OUTCOMES]);
    expect([...types.GATEWAY_ENDPOINTS]).toEqual([...GATEWAY_ENDPOINTS]);
    expect([...types.PROJECT_ROLES].sort()).toEqual([...SERVER_ROLES].sort());
  });
});

describe('api client', () => {
  function fakeFetch(status: number, body: unknown, headers: Record<string, string> = {}) {
    const calls: { url: string; init: RequestInit }[] = [];
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      calls.push({ url: String(url), init: init ?? {} });
      return new Response(body === null ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
    };
    return { calls, fetch: fetch as typeof globalThis.fetch };
  }

  it('sends the bearer and JSON, and builds the query string', async () => {
    const f = fakeFetch(200, { data: [] });
    const client = createApiClient({ token: () => 'jwt', onUnauthorized: () => {}, fetch: f.fetch });
    await client.get('/v1/usage', { project_id: 'p', model: '', limit: 50 });
    await client.post('/v1/projects', { name: 'x' });
    expect(f.calls[0]?.url).toBe('/v1/usage?project_id=p&limit=50');
    expect(f.calls[0]?.init.headers).toMatchObject({ authorization: 'Bearer jwt', accept: 'application/json' });
    expect(f.calls[1]?.init).toMatchObject({ method: 'POST', body: '{"name":"x"}', credentials: 'omit' });
    expect(f.calls[1]?.init.headers).toMatchObject({ 'content-type': 'application/json' });
  });

  it('turns an error answer into an ApiError and reports a refused token', async () => {
    const f = fakeFetch(401, { error: { message: 'Missing, unknown or deleted credentials.', type: 'authentication_error', param: null, code: 'UNAUTHORIZED' } });
    let ended = 0;
    const client = createApiClient({ token: () => 'jwt', onUnauthorized: () => (ended += 1), fetch: f.fetch });
    await expect(client.get('/v1/projects')).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect(ended).toBe(1);
  });

  it('does not end a session over a 403', async () => {
    const f = fakeFetch(403, { error: { message: 'no', type: 'permission_error', param: null, code: 'FORBIDDEN' } });
    let ended = 0;
    const client = createApiClient({ token: () => 'jwt', onUnauthorized: () => (ended += 1), fetch: f.fetch });
    const err = await client.post('/v1/projects/p/members', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(ended).toBe(0);
  });

  it('reports an unreachable server as status 0', async () => {
    const client = createApiClient({
      token: () => null,
      onUnauthorized: () => {},
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
    });
    await expect(client.delete('/v1/projects/p')).rejects.toMatchObject({ status: 0, code: 'NETWORK' });
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthError } from './cli-errors.js';
import type { StoredConfig } from './config-file.js';
import type { Http, HttpAnswer, HttpRequest } from './http.js';
import { REFRESH_BEFORE_MS, Session } from './session.js';

/** The saved token, refreshed before it runs out; the server is a list of prepared answers. */
const dir = mkdtempSync(join(tmpdir(), 'gatewayctl-session-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = 1_800_000_000_000;

function session(config: Partial<StoredConfig>, answers: HttpAnswer[]) {
  const sent: HttpRequest[] = [];
  const http = { base: 'http://cp', send: async (req: HttpRequest) => (sent.push(req), answers.shift() as HttpAnswer) } as unknown as Http;
  const location = { path: join(dir, `${Math.random()}.json`), ownDirectory: false };
  const s = new Session(http, location, { url: 'http://cp', token: 'old', expires_at: NOW + 3_600_000, ...config }, () => NOW);
  return { s, sent, saved: () => JSON.parse(readFileSync(location.path, 'utf8')) as StoredConfig };
}

const token = (access_token: string, expires_in: number): HttpAnswer => ({ status: 200, body: { access_token, token_type: 'Bearer', expires_in } });

describe('Session', () => {
  it('uses a token with time left as it is', async () => {
    const { s, sent } = session({ expires_at: NOW + REFRESH_BEFORE_MS }, []);
    expect(await s.bearer()).toBe('old');
    expect(sent).toEqual([]);
  });

  it('refreshes a token close to its end with the refresh grant, and saves the new one', async () => {
    const { s, sent, saved } = session({ expires_at: NOW + REFRESH_BEFORE_MS - 1 }, [token('new', 3600)]);
    expect(await s.bearer()).toBe('new');
    expect(sent).toEqual([{ method: 'POST', path: '/v1/signins', body: { grant_type: 'refresh' }, bearer: 'old' }]);
    expect(saved()).toEqual({ url: 'http://cp', token: 'new', expires_at: NOW + 3_600_000 });
    expect(await s.bearer()).toBe('new');
    expect(sent).toHaveLength(1);
  });

  it('stops refreshing once the session is about to end anyway', async () => {
    const { s, sent, saved } = session({ expires_at: NOW + 60_000 }, [token('last', 120)]);
    expect(await s.bearer()).toBe('last');
    expect(saved().session_ends_at).toBe(NOW + 120_000);
    expect(await s.bearer()).toBe('last');
    expect(sent).toHaveLength(1);
  });

  it('says to sign in again when the token has expired or the refresh is refused', async () => {
    await expect(session({ expires_at: NOW }, []).s.bearer()).rejects.toThrow(/expired; sign in again/);
    await expect(session({ token: undefined }, []).s.bearer()).rejects.toBeInstanceOf(AuthError);
    const refused: HttpAnswer = { status: 401, body: { error: { message: 'The session has reached its maximum age; sign in again.', type: 'authentication_error', param: null, code: 'UNAUTHORIZED' } } };
    await expect(session({ expires_at: NOW + 1000 }, [refused]).s.bearer()).rejects.toThrow(/maximum age.*\(UNAUTHORIZED\)/);
  });

  it('keeps using a still valid token when a refresh fails for another reason', async () => {
    const busy: HttpAnswer = { status: 503, body: { error: { message: 'Unavailable.', type: 'api_error', param: null, code: 'UNAVAILABLE' } } };
    expect(await session({ expires_at: NOW + 1000 }, [busy]).s.bearer()).toBe('old');
  });
});

import { describe, expect, it } from 'vitest';
import { LOG_REDACT_PATHS } from '@gateway/shared';
import { createLogger } from './logger.js';

describe('log redaction', () => {
  it('censors every secret-bearing field of the shared list, in request logs and in plain objects', () => {
    const lines: string[] = [];
    const log = createLogger('info', 'test', { write: (line: string) => void lines.push(line) });
    const secret = (name: string) => `s3cret-${name}`;
    log.info({ req: { headers: { authorization: secret('auth'), 'x-api-key': secret('xkey'), cookie: secret('cookie'), host: 'visible' } } }, 'request');
    const fields = ['authorization', 'x-api-key', 'cookie', 'password', 'current_password', 'new_password', 'access_token', 'token', 'api_key', 'apiKey', 'key', 'secret'];
    log.info({ body: Object.fromEntries(fields.map((f) => [f, secret(f)])), keep: 'visible' }, 'object');
    const text = lines.join('');
    expect(text).not.toMatch(/s3cret-/);
    expect(text.match(/visible/g)).toHaveLength(2);
    // Every one-level field named above is in the one list both services use.
    for (const f of fields) expect(LOG_REDACT_PATHS.some((p) => p === `*.${f}` || p === `*["${f}"]`), f).toBe(true);
  });
});

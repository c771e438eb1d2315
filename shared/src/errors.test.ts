import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, Errors, GatewayError, statusLine, toGatewayError, type ErrorCode } from './errors.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Rows of the README's "Error codes" table: | `CODE` | status | … | */
function documentedCodes(): Map<string, number> {
  const section = README.split(/^## Error codes$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, number>();
  for (const match of section.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|/gm)) {
    rows.set(match[1] as string, Number(match[2]));
  }
  return rows;
}

describe('error table', () => {
  it('README documents every code with the status the code sends, and nothing else', () => {
    const documented = documentedCodes();
    const inCode = new Map(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status]));
    expect(documented).toEqual(inCode);
  });

  it('builds the OpenAI error shape with a stable code', () => {
    const err = new GatewayError('UNAUTHORIZED');
    expect(err.status).toBe(401);
    expect(err.toBody()).toEqual({
      error: { message: ERROR_CODES.UNAUTHORIZED.message, type: 'authentication_error', param: null, code: 'UNAUTHORIZED' },
    });
    expect(JSON.parse(err.toJSON())).toEqual(err.toBody());
  });

  it('hides the text of unexpected errors behind INTERNAL', () => {
    const err = toGatewayError(new Error('password=hunter2 leaked in a driver message'));
    expect(err.code).toBe<ErrorCode>('INTERNAL');
    expect(err.message).not.toContain('hunter2');
  });

  it('has a status line for every status it can send', () => {
    for (const { status } of Object.values(ERROR_CODES)) expect(statusLine(status)).not.toMatch(/Unknown/);
  });

  it('makes each named error a fresh GatewayError of a listed code, with a message of its own', () => {
    const args: Record<string, unknown[]> = {};
    for (const [name, make] of Object.entries(Errors) as [string, (...a: unknown[]) => GatewayError][]) {
      const err = make(...(args[name] ?? Array.from({ length: make.length }, (_, i) => (i === 0 ? 'p' : 1))));
      expect(err, name).toBeInstanceOf(GatewayError);
      expect(ERROR_CODES[err.code], name).toBeDefined();
      expect(err.message, name).not.toBe('');
      expect(make(...Array.from({ length: make.length }, () => 'x')), name).not.toBe(err);
    }
    expect(Errors.modelNotAllowed('gpt-x')).toMatchObject({ code: 'MODEL_NOT_ALLOWED', status: 403, param: 'model', message: 'The model `gpt-x` is not allowed for this project.' });
    expect(Errors.providerStatus('p', 504, '', true)).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
  });
});

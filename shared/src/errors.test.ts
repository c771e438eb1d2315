import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, GatewayError, statusLine, toGatewayError, type ErrorCode } from './errors.js';

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
});

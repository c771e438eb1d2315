import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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
    // Factories whose first argument is a code (or carries one) cannot take a sample string.
    const args: Record<string, unknown[]> = {
      fromProvider: ['RATE_LIMITED', 'Provider p is rate-limiting requests', { retryAfter: 1, retryable: true }],
      mcpRefused: ['MCP_NOT_ALLOWED', 'The method is not allowed.'],
      mcpRefusedInBatch: [{ code: 'TOOL_NOT_ALLOWED', message: 'The tool `t` is not allowed for this project.' }],
      relayed: ['NOT_FOUND', 'No such file.', 'file_id'],
    };
    for (const [name, make] of Object.entries(Errors) as [string, (...a: unknown[]) => GatewayError][]) {
      const err = make(...(args[name] ?? Array.from({ length: make.length }, (_, i) => (i === 0 ? 'p' : 1))));
      expect(err, name).toBeInstanceOf(GatewayError);
      expect(ERROR_CODES[err.code], name).toBeDefined();
      expect(err.message, name).not.toBe('');
      expect(make(...(args[name] ?? Array.from({ length: make.length }, () => 'x'))), name).not.toBe(err);
    }
    expect(Errors.modelNotAllowed('gpt-x')).toMatchObject({ code: 'MODEL_NOT_ALLOWED', status: 403, param: 'model', message: 'The model `gpt-x` is not allowed for this project.' });
    expect(Errors.providerStatus('p', 504, '', true)).toMatchObject({ code: 'UPSTREAM_TIMEOUT', retryable: true });
  });

  it('is the only place that writes `new GatewayError(`: everything else calls a named factory', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    // The error module itself (the class and the table live in one file).
    const errorModules = new Set([fileURLToPath(new URL('./errors.ts', import.meta.url))]);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules') walk(path);
          continue;
        }
        if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts') || entry.name.endsWith('.case.ts') || errorModules.has(path)) continue;
        readFileSync(path, 'utf8').split('\n').forEach((line, i) => {
          if (line.includes('new GatewayError(')) offenders.push(`${relative(root, path)}:${i + 1}`);
        });
      }
    };
    for (const dir of ['proxy/src', 'control-plane/src', 'shared/src']) walk(join(root, dir));
    expect(offenders, 'use a named factory of Errors (shared/src/errors.ts) instead').toEqual([]);
  });
});

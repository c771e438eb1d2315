import { ERROR_CODES, GatewayError, type ErrorCode } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { anthropicErrorBody, anthropicStreamError } from './anthropic-errors.js';

const ANTHROPIC_TYPES = new Set(['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'api_error', 'overloaded_error']);

describe("errors in Anthropic's shape", () => {
  it('gives every gateway error code one of Anthropic\'s error types', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const body = JSON.parse(anthropicErrorBody(new GatewayError(code))) as { type: string; error: { type: string; message: string } };
      expect(body.type).toBe('error');
      expect(ANTHROPIC_TYPES).toContain(body.error.type);
      expect(body.error.message.length).toBeGreaterThan(0);
    }
  });

  it('uses the type Anthropic gives each status', () => {
    const typeOf = (code: ErrorCode) => (JSON.parse(anthropicErrorBody(new GatewayError(code))) as { error: { type: string } }).error.type;
    expect(typeOf('UNAUTHORIZED')).toBe('authentication_error');
    expect(typeOf('INVALID_REQUEST')).toBe('invalid_request_error');
    expect(typeOf('MODEL_NOT_ALLOWED')).toBe('permission_error');
    expect(typeOf('MODEL_NOT_FOUND')).toBe('not_found_error');
    expect(typeOf('PAYLOAD_TOO_LARGE')).toBe('request_too_large');
    expect(typeOf('QUOTA_EXCEEDED')).toBe('rate_limit_error');
    expect(typeOf('RATE_LIMITED')).toBe('rate_limit_error');
    expect(typeOf('UPSTREAM_ERROR')).toBe('api_error');
    expect(typeOf('UNAVAILABLE')).toBe('overloaded_error');
  });

  it('leads the message with the field, unless the message starts with it', () => {
    const message = (err: GatewayError) => (JSON.parse(anthropicErrorBody(err)) as { error: { message: string } }).error.message;
    expect(message(new GatewayError('INVALID_REQUEST', 'Field required', { param: 'max_tokens' }))).toBe('max_tokens: Field required');
    expect(message(new GatewayError('INVALID_REQUEST', 'max_tokens may be at most 10 for this project.', { param: 'max_tokens' }))).toBe('max_tokens may be at most 10 for this project.');
    expect(message(new GatewayError('INVALID_REQUEST', 'not supported: there is no top_k', { param: 'top_k' }))).toBe('top_k: not supported: there is no top_k');
    expect(message(new GatewayError('UNAUTHORIZED', 'The API key was deleted.'))).toBe('The API key was deleted.');
  });

  it('ends a stream with an error event that has its event line', () => {
    expect(anthropicStreamError(new GatewayError('UNAUTHORIZED', 'The API key was deleted.'))).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"authentication_error","message":"The API key was deleted."}}\n\n',
    );
  });
});

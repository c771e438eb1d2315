import type { GatewayError } from '@gateway/shared';
import { anthropicErrorType } from '../../conversion/anthropic-openai.js';

/**
 * Errors in Anthropic's shape, `{"type":"error","error":{"type","message"}}`, with the gateway's
 * status kept and its code's Anthropic type (conversion/anthropic-openai.ts). Anthropic's body has
 * no `param`: the field leads the message instead ("max_tokens: Field required"), unless the
 * message already starts with it.
 */
function errorMessage(err: GatewayError): string {
  const param = err.param;
  if (param === null || err.message.startsWith(param) || err.message.startsWith(`\`${param}\``)) return err.message;
  return `${param}: ${err.message}`;
}

export function anthropicErrorBody(err: GatewayError): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(err.code), message: errorMessage(err) } });
}

/** One SSE event with its `event:` line: Anthropic's SDKs skip events that have none. */
export function sseEvent(name: string, data: string): string {
  return `event: ${name}\ndata: ${data}\n\n`;
}

export function anthropicStreamError(err: GatewayError): string {
  return sseEvent('error', anthropicErrorBody(err));
}

import { randomUUID } from 'node:crypto';
import type { FinishReason } from '@gateway/shared';

/**
 * The gateway's finish reason as Anthropic's stop_reason. A stop at one of `stop_sequences` is
 * `end_turn` too: OpenAI-shaped answers say `stop` for both a natural end and a stop sequence,
 * and the text is cut before the sequence, so nothing tells them apart.
 */
export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

export function stopReason(finish: FinishReason | null): StopReason {
  switch (finish) {
    case 'max_tokens':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic message ids start with msg_; the provider's completion id follows, so the two can be matched. */
export function messageId(completionId: unknown): string {
  const id = typeof completionId === 'string' ? completionId.replace(/^chatcmpl-/, '').replace(/[^A-Za-z0-9_-]/g, '') : '';
  return `msg_${id === '' ? randomUUID().replaceAll('-', '') : id.slice(0, 128)}`;
}

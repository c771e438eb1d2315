import { randomUUID } from 'node:crypto';

/** Anthropic message ids start with msg_; the provider's completion id follows, so the two can be matched. */
export function messageId(completionId: unknown): string {
  const id = typeof completionId === 'string' ? completionId.replace(/^chatcmpl-/, '').replace(/[^A-Za-z0-9_-]/g, '') : '';
  return `msg_${id === '' ? randomUUID().replaceAll('-', '') : id.slice(0, 128)}`;
}

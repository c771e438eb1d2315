import { describe, expect, it } from 'vitest';
import { GatewayError } from '@gateway/shared';
import type { ProviderAdapter, ProviderAnswer, StoredResponseRequest } from '../providers/adapter.js';
import { Cancel } from '../providers/cancel.js';
import { nativeConversation } from './native-conversation.js';

/** A provider that keeps a chain of two responses; `history`: it lists a chained response's earlier turns among its input items. */
function keeping(history: boolean): { adapter: ProviderAdapter; asked: StoredResponseRequest[] } {
  const asked: StoredResponseRequest[] = [];
  const a1 = { id: 'msg_a1', type: 'message', role: 'user', content: 'one' };
  const o1 = { id: 'msg_o1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'first' }] };
  const a2 = { id: 'msg_a2', type: 'message', role: 'user', content: 'two' };
  const o2 = { id: 'msg_o2', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'second' }] };
  const responses: Record<string, unknown> = { resp_1: { id: 'resp_1', previous_response_id: null, output: [o1] }, resp_2: { id: 'resp_2', previous_response_id: 'resp_1', output: [o2] } };
  const inputs: Record<string, unknown[]> = { resp_1: [a1], resp_2: history ? [a1, o1, a2] : [a2] };
  const answer = (status: number, body: unknown): ProviderAnswer => ({
    status,
    header: () => 'application/json',
    body: async () => Buffer.from(JSON.stringify(body)),
    stream: async function* () {},
    destroy: () => {},
  });
  const adapter = {
    name: 'keeper',
    storedResponse(request: StoredResponseRequest) {
      asked.push(request);
      const found = responses[request.id];
      if (found === undefined) return Promise.resolve(answer(404, { error: { message: 'gone' } }));
      if (!request.items) return Promise.resolve(answer(200, found));
      // One item per page, so every page is asked for.
      const all = inputs[request.id]!;
      const after = new URLSearchParams(request.query).get('after');
      const from = after === null ? 0 : all.findIndex((item) => (item as { id: string }).id === after) + 1;
      const page = all.slice(from, from + 1);
      return Promise.resolve(answer(200, { object: 'list', data: page, has_more: from + 1 < all.length, last_id: (page[0] as { id?: string } | undefined)?.id ?? null }));
    },
  } as unknown as ProviderAdapter;
  return { adapter, asked };
}

describe('nativeConversation', () => {
  for (const history of [false, true]) {
    it(`reads the chain oldest first, each item once (input items ${history ? 'with' : 'without'} the earlier turns)`, async () => {
      const { adapter, asked } = keeping(history);
      const items = (await nativeConversation(adapter, 'resp_2', new Cancel())) as { id: string }[];
      expect(items.map((item) => item.id)).toEqual(['msg_a1', 'msg_o1', 'msg_a2', 'msg_o2']);
      expect(asked.filter((r) => r.items).every((r) => r.query.startsWith('order=asc&limit=100'))).toBe(true);
    });
  }

  it("answers a response its provider no longer has as the follow-up's unknown previous response", async () => {
    const { adapter } = keeping(false);
    const err = await nativeConversation(adapter, 'resp_9', new Cancel()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).param).toBe('previous_response_id');
    expect((err as Error).message).toContain("Previous response with id 'resp_9' not found.");
  });
});

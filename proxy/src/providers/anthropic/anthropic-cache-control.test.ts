import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { EPHEMERAL, markedRequest } from '../cache-breakpoint.case.js';
import { toAnthropicRequest } from '../../conversion/chat-anthropic/anthropic-request.js';

/** Prompt-cache breakpoints of an OpenAI-shape request kept on the Anthropic blocks they become. */
const settings = { upstreamModel: 'claude', stream: false, defaultMaxTokens: 1024 };

function translate(body: Record<string, unknown>) {
  return toAnthropicRequest({ model: 'm', ...body }, settings);
}

describe('cache_control → Anthropic', () => {
  it('keeps it on text, image and file parts, and on tools', () => {
    const out = translate(markedRequest('https://example.test/x.png'));
    const blocks = out.messages[0]?.content as { cache_control?: unknown }[];
    expect(blocks.map((b) => b.cache_control)).toEqual([EPHEMERAL, { type: 'ephemeral', ttl: '1h' }, EPHEMERAL, undefined]);
    expect(out.tools?.map((t) => t.cache_control)).toEqual([EPHEMERAL, undefined]);
  });

  it('puts a message-level breakpoint on the last block, turning string content into a block', () => {
    const out = translate({
      messages: [
        { role: 'system', content: 'preamble', cache_control: EPHEMERAL },
        { role: 'user', content: 'question', cache_control: EPHEMERAL },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'text', text: 'y' }], cache_control: EPHEMERAL },
      ],
    });
    expect(out.system).toEqual([{ type: 'text', text: 'preamble', cache_control: EPHEMERAL }]);
    expect(out.messages[0]?.content).toEqual([{ type: 'text', text: 'question', cache_control: EPHEMERAL }]);
    expect(out.messages[1]?.content).toBe('answer');
    expect(out.messages[2]?.content).toEqual([{ type: 'text', text: 'x' }, { type: 'text', text: 'y', cache_control: EPHEMERAL }]);
  });

  it('sends a system without breakpoints as a string, as before', () => {
    expect(translate({ messages: [{ role: 'system', content: 'preamble' }, { role: 'user', content: 'q' }] }).system).toBe('preamble');
  });

  it('refuses anything but an ephemeral breakpoint, naming where it is', () => {
    for (const [control, param] of [
      [{ type: 'persistent' }, 'messages[0].content[0].cache_control'],
      ['yes', 'messages[0].content[0].cache_control'],
      [{ type: 'ephemeral', ttl: '2h' }, 'messages[0].content[0].cache_control.ttl'],
    ] as const) {
      try {
        translate({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: control }] }] });
        throw new Error('accepted');
      } catch (err) {
        expect(err).toBeInstanceOf(GatewayError);
        expect((err as GatewayError).param).toBe(param);
      }
    }
  });
});

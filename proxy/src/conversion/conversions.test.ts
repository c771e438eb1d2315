import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CompletionResult, StreamMeta } from '../request/internal-request.js';
import type { ChatCompletionBody } from '../request/openai-chat.js';
import { newStreamMeta } from '../providers/stream-inspector.js';
import type { StreamWriter } from '../protocols/protocol.js';
import type { Conversion, PairTypes, ProviderStreamTranslator } from './conversion.js';
import { chatAnthropic } from './chat-anthropic/chat-anthropic.js';
import { chatConverse } from './chat-converse/chat-converse.js';
import { chatGemini } from './chat-gemini/chat-gemini.js';
import { messagesChat } from './messages-chat/messages-chat.js';
import { responsesChat } from './responses-chat/responses-chat.js';

/**
 * The protocol pairs as one suite: every folder of conversion/ is one pair exporting its
 * Conversion, and a typical coding-agent turn (10 messages, 20 tools, a tool loop under way) goes
 * from each client protocol through the internal request to each provider protocol, and each
 * provider's answer to it — whole, and as its event stream, both in the provider's documented
 * wire format — comes back to each client protocol with its text, its tool call and its counts.
 */
const here = dirname(fileURLToPath(import.meta.url));

/** Each folder's Conversion, from its `<folder>/<folder>.ts`. */
const PAIRS: Readonly<Record<string, Conversion<PairTypes>>> = {
  'chat-anthropic': chatAnthropic as unknown as Conversion<PairTypes>,
  'chat-converse': chatConverse as unknown as Conversion<PairTypes>,
  'chat-gemini': chatGemini as unknown as Conversion<PairTypes>,
  'messages-chat': messagesChat as unknown as Conversion<PairTypes>,
  'responses-chat': responsesChat as unknown as Conversion<PairTypes>,
};

describe('the conversion folder', () => {
  it('holds one folder per protocol pair, each exporting the Conversion it is named for', () => {
    const folders = readdirSync(here).filter((name) => statSync(join(here, name)).isDirectory());
    expect(folders.sort()).toEqual(['chat-anthropic', 'chat-converse', 'chat-gemini', 'messages-chat', 'responses-chat']);
    for (const folder of folders) {
      const pair = PAIRS[folder];
      expect(pair, `${folder}/${folder}.ts`).toBeDefined();
      expect(`${pair!.client}-${pair!.provider}`).toBe(folder);
      for (const method of ['toRequest', 'fromResponse', 'streamTranslator'] as const) expect(typeof pair![method], `${folder}.${method}`).toBe('function');
    }
  });
});

// ---- a coding agent's turn, as each client protocol sends it ----

const TOOLS = Array.from({ length: 20 }, (_, i) => ({ name: i === 0 ? 'read_file' : `tool_${i}`, description: `Tool number ${i}.`, schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }));
const STEPS = 4;

function messagesTurn(): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: 'Fix the failing test in a.ts.' }];
  for (let i = 1; i <= STEPS; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${i}.` }, { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `f${i}.ts` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `export const v${i} = ${i};` }] });
  }
  messages.push({ role: 'assistant', content: 'Almost there.' }, { role: 'user', content: 'Go on.' });
  return { model: 'agent-model', max_tokens: 4096, system: 'You are a coding agent.', tools: TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })), messages };
}

function responsesTurn(): Record<string, unknown> {
  const input: unknown[] = [{ role: 'user', content: 'Fix the failing test in a.ts.' }];
  for (let i = 1; i <= STEPS; i++) {
    input.push({ type: 'function_call', call_id: `call_${i}`, name: 'read_file', arguments: JSON.stringify({ path: `f${i}.ts` }) });
    input.push({ type: 'function_call_output', call_id: `call_${i}`, output: `export const v${i} = ${i};` });
  }
  input.push({ role: 'assistant', content: 'Almost there.' }, { role: 'user', content: 'Go on.' });
  return { model: 'agent-model', instructions: 'You are a coding agent.', store: false, tools: TOOLS.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.schema })), input };
}

interface Client {
  name: string;
  /** The internal request of the client's turn. */
  chat: () => ChatCompletionBody;
  /** The client's whole answer, as text. */
  render: (result: CompletionResult) => string;
  writer: (meta: StreamMeta) => StreamWriter;
}

const CLIENTS: Client[] = [
  {
    name: 'messages',
    chat: () => messagesChat.toRequest(messagesTurn(), { raw: Buffer.from('{}'), purpose: 'create' }).chat,
    render: (result) => messagesChat.fromResponse(result, { model: 'agent-model' }).toString(),
    writer: () => messagesChat.streamTranslator({ model: 'agent-model', promptEstimate: 100 }),
  },
  {
    name: 'responses',
    chat: () => responsesChat.toRequest(responsesTurn(), undefined).chat,
    render: (result) => responsesChat.fromResponse(result, { model: 'agent-model', echo: {} }).toString(),
    writer: () => responsesChat.streamTranslator({ model: 'agent-model', echo: {} }),
  },
];

// ---- each provider's answer, in its documented wire format ----

const sse = (events: unknown[]) => events.map((e) => JSON.stringify(e));

interface Provider {
  name: string;
  /** The provider's request made of the internal one: how many messages and tools it carries. */
  request: (chat: ChatCompletionBody) => { messages: number; tools: number };
  answer: () => CompletionResult;
  stream: (meta: StreamMeta) => { translator: ProviderStreamTranslator<never>; events: unknown[] };
}

const PROVIDERS: Provider[] = [
  {
    name: 'anthropic',
    request: (chat) => {
      const out = chatAnthropic.toRequest(chat, { upstreamModel: 'claude-up', stream: false, defaultMaxTokens: 4096 });
      return { messages: out.messages.length, tools: out.tools?.length ?? 0 };
    },
    answer: () =>
      chatAnthropic.fromResponse(
        // Anthropic's Message object as its API reference shows it (type, role and stop_sequence are not read).
        JSON.parse(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-up', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_9', name: 'read_file', input: { path: 'a.ts' } }], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 1200, output_tokens: 40 } })),
        { fallbackModel: 'claude-up' },
      ),
    stream: (meta) => ({
      translator: chatAnthropic.streamTranslator({ provider: 'anthropic', meta, clientWantsUsage: true, requestId: 'r1', fallbackModel: 'claude-up' }) as ProviderStreamTranslator<never>,
      events: sse([
        { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-up', content: [], stop_reason: null, usage: { input_tokens: 1200, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me look.' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_9', name: 'read_file', input: {} } },
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":"a.ts"}' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } },
        { type: 'message_stop' },
      ]),
    }),
  },
  {
    name: 'gemini',
    request: (chat) => {
      const out = chatGemini.toRequest(chat, {});
      return { messages: out.contents.length, tools: out.tools?.[0]?.functionDeclarations?.length ?? 0 };
    },
    answer: () =>
      chatGemini.fromResponse(
        { candidates: [{ content: { role: 'model', parts: [{ text: 'Let me look.' }, { functionCall: { name: 'read_file', args: { path: 'a.ts' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 40, totalTokenCount: 1240 } },
        { id: 'chatcmpl-1', model: 'agent-model', created: 1, firstCall: 0, provider: 'gemini' },
      ),
    stream: (meta) => ({
      translator: chatGemini.streamTranslator({ meta, id: 'chatcmpl-1', model: 'agent-model', created: 1, firstCall: 0, provider: 'gemini', clientWantsUsage: true, secret: null }) as ProviderStreamTranslator<never>,
      events: sse([
        { candidates: [{ content: { role: 'model', parts: [{ text: 'Let me look.' }] }, index: 0 }] },
        { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'a.ts' } } }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 1200, candidatesTokenCount: 40, totalTokenCount: 1240 } },
      ]),
    }),
  },
  {
    name: 'converse',
    request: (chat) => {
      const out = chatConverse.toRequest(chat, undefined);
      return { messages: out.messages.length, tools: out.toolConfig?.tools.length ?? 0 };
    },
    answer: () =>
      chatConverse.fromResponse(
        { output: { message: { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: 'tooluse_9', name: 'read_file', input: { path: 'a.ts' } } }] } }, stopReason: 'tool_use', usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240 } },
        { provider: 'bedrock', id: 'chatcmpl-1', model: 'agent-model' },
      ),
    stream: (meta) => {
      const event = (eventType: string, body: unknown) => ({ messageType: 'event', eventType, payload: JSON.stringify(body) });
      return {
        translator: chatConverse.streamTranslator({ meta, id: 'chatcmpl-1', model: 'agent-model', provider: 'bedrock', clientWantsUsage: true }) as ProviderStreamTranslator<never>,
        events: [
          event('messageStart', { role: 'assistant' }),
          event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me look.' } }),
          event('contentBlockStop', { contentBlockIndex: 0 }),
          event('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_9', name: 'read_file' } } }),
          event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"path":"a.ts"}' } } }),
          event('contentBlockStop', { contentBlockIndex: 1 }),
          event('messageStop', { stopReason: 'tool_use' }),
          event('metadata', { usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240 }, metrics: { latencyMs: 10 } }),
        ],
      };
    },
  },
];

describe.each(CLIENTS)('an agent turn from a $name client', (client) => {
  it('becomes one internal request keeping its system prompt, its tool loop and its 20 tools', () => {
    const chat = client.chat();
    expect(chat.messages[0]).toMatchObject({ role: 'system' });
    expect(chat.tools).toHaveLength(20);
    const calls = chat.messages.filter((m) => m.role === 'assistant' && Array.isArray((m as { tool_calls?: unknown[] }).tool_calls));
    expect(calls).toHaveLength(STEPS);
    expect(chat.messages.filter((m) => m.role === 'tool')).toHaveLength(STEPS);
  });

  describe.each(PROVIDERS)('to $name', (provider) => {
    it("is written in the provider's protocol with every message and tool", () => {
      const written = provider.request(client.chat());
      expect(written.tools).toBe(20);
      expect(written.messages).toBeGreaterThanOrEqual(2 * STEPS + 2);
    });

    it("gets the provider's whole answer back in its own protocol: text, tool call, counts", () => {
      const result = provider.answer();
      expect(result).toMatchObject({ status: 200, finishReason: 'tool_calls', usage: { input: 1200, output: 40 } });
      const rendered = client.render(result);
      expect(rendered).toContain('Let me look.');
      expect(rendered).toContain('read_file');
      expect(rendered).toContain('a.ts');
    });

    it("gets the provider's stream back as its own protocol's events, ended once", () => {
      const meta = newStreamMeta();
      const { translator, events } = provider.stream(meta);
      const chunks: string[] = [];
      for (const event of events) translator.push(event as never, chunks);
      translator.end(chunks);
      expect(meta).toMatchObject({ finishReason: 'tool_calls', usage: { input: 1200, output: 40 } });
      const writer = client.writer(meta);
      const text = [writer.start(), ...chunks.map((c) => writer.chunk(c)), writer.end(meta)].join('');
      expect(text).toContain('Let me look.');
      expect(text).toContain('read_file');
      expect(text).toContain(client.name === 'messages' ? 'message_stop' : 'response.completed');
    });
  });
});

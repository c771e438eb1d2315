import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionBody } from '../request/openai-chat.js';
import { ANTHROPIC_PARAMS } from '../providers/anthropic/anthropic-params.js';
import { BEDROCK_PARAMS } from '../providers/bedrock/bedrock-params.js';
import { GEMINI_PARAMS } from '../providers/gemini/gemini-params.js';
import { dropRefused, FRAME, judgeParams, type ParamTable } from './param-support.js';

const TABLES: [string, ParamTable][] = [
  ['Anthropic', ANTHROPIC_PARAMS],
  ['Bedrock Converse', BEDROCK_PARAMS],
  ['Gemini', GEMINI_PARAMS],
];

function judge(body: Record<string, unknown>, table: ParamTable) {
  return judgeParams({ model: 'gw-model', messages: [{ role: 'user', content: 'Hi' }], ...body } as ChatCompletionBody, table);
}

function refusal(body: Record<string, unknown>, table: ParamTable): GatewayError {
  const { refused } = judge(body, table);
  if (refused === null) throw new Error(`expected a refusal of ${JSON.stringify(body)}`);
  expect(refused).toBeInstanceOf(GatewayError);
  expect(refused.code).toBe('UNSUPPORTED_PARAMETER');
  expect(refused.status).toBe(400);
  expect(refused.retryable).toBe(false);
  return refused;
}

/** What changes the answer's shape, on every table: [field, a value refused, the values honoured]. */
const SHAPE: [string, unknown, unknown[]][] = [
  ['n', 2, [1]],
  ['logprobs', true, [false]],
  ['top_logprobs', 3, [0]],
  ['audio', { voice: 'alloy', format: 'mp3' }, []],
  ['modalities', ['text', 'audio'], [['text'], []]],
  ['functions', [{ name: 'f' }], []],
  ['function_call', 'auto', []],
  ['web_search_options', {}, []],
];

describe.each(TABLES)('judgeParams against the %s table', (provider, table) => {
  it('names its provider', () => {
    expect(table.provider).toBe(provider);
  });

  it.each(SHAPE)('refuses %s, naming the field and the provider', (field, value) => {
    const err = refusal({ [field]: value }, table);
    expect(err.param).toBe(field);
    expect(err.message).toContain(`\`${field}\``);
    expect(err.message).toContain(`(${provider})`);
  });

  it.each(SHAPE)('honours %s at its no-op values: neither refused nor dropped', (field, _value, honoured) => {
    for (const value of honoured) expect(judge({ [field]: value }, table)).toEqual({ dropped: [], refused: null });
  });

  it('never drops a field of the request frame, whatever its value', () => {
    const frame: Record<string, unknown> = {
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 10,
      max_completion_tokens: 20,
      temperature: 1.5,
      top_p: 0.5,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'f' } }],
      tool_choice: 'required',
      user: 'u-1',
    };
    expect(Object.keys(frame).sort()).toEqual(FRAME.filter((f) => f !== 'model' && f !== 'messages').sort());
    for (const field of FRAME) expect(table.carried.has(field)).toBe(true);
    expect(judge(frame, table)).toEqual({ dropped: [], refused: null });
  });

  it('drops fields it does not know, in the body’s order', () => {
    expect(judge({ foo_bar: 1, store: true, metadata: { a: 'b' }, service_tier: 'auto', verbosity: 'low', prompt_cache_key: 'k' }, table)).toEqual({
      dropped: ['foo_bar', 'store', 'metadata', 'service_tier', 'verbosity', 'prompt_cache_key'],
      refused: null,
    });
  });

  it('drops logit_bias unless empty', () => {
    expect(judge({ logit_bias: { '50256': -100 } }, table)).toEqual({ dropped: ['logit_bias'], refused: null });
    expect(judge({ logit_bias: {} }, table)).toEqual({ dropped: [], refused: null });
  });

  it('ignores fields sent as null or left undefined', () => {
    const body: Record<string, unknown> = { foo_bar: null, logit_bias: undefined, seed: null, reasoning_effort: null, response_format: null };
    for (const [field] of SHAPE) body[field] = field === 'n' ? undefined : null;
    expect(judge(body, table)).toEqual({ dropped: [], refused: null });
  });

  it('refuses the first field that changes the answer, with the drops met before it', () => {
    const { dropped, refused } = judge({ foo_bar: 1, n: 2, verbosity: 'low', logprobs: true }, table);
    expect(dropped).toEqual(['foo_bar']);
    expect(refused?.param).toBe('n');
  });
});

describe.each([
  ['Anthropic', ANTHROPIC_PARAMS],
  ['Bedrock Converse', BEDROCK_PARAMS],
] as const)('%s: what only tunes the answer is dropped', (_provider, table) => {
  it('drops penalties (unless 0) and seed, in the body’s order', () => {
    expect(judge({ seed: 7, presence_penalty: 0.5, frequency_penalty: -1 }, table)).toEqual({
      dropped: ['seed', 'presence_penalty', 'frequency_penalty'],
      refused: null,
    });
    expect(judge({ presence_penalty: 0, frequency_penalty: 0 }, table)).toEqual({ dropped: [], refused: null });
  });

  it('honours a text response_format', () => {
    expect(judge({ response_format: { type: 'text' } }, table)).toEqual({ dropped: [], refused: null });
  });
});

describe('reasoning_effort', () => {
  const loop = [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
  ];
  const signed = { ...loop[1], thinking_blocks: [{ type: 'thinking', thinking: 'Look it up.', signature: 'sig' }] };

  it('is carried to Anthropic as thinking, and dropped where Anthropic would refuse thinking', () => {
    expect(judge({ reasoning_effort: 'high' }, ANTHROPIC_PARAMS)).toEqual({ dropped: [], refused: null });
    expect(judge({ reasoning_effort: 'high', tool_choice: 'required' }, ANTHROPIC_PARAMS).dropped).toEqual(['reasoning_effort']);
    expect(judge({ reasoning_effort: 'high', max_completion_tokens: 1000 }, ANTHROPIC_PARAMS).dropped).toEqual(['reasoning_effort']);
    expect(judge({ reasoning_effort: 'low', messages: loop }, ANTHROPIC_PARAMS).dropped).toEqual(['reasoning_effort']);
    expect(judge({ reasoning_effort: 'low', messages: [loop[0], signed, loop[2]] }, ANTHROPIC_PARAMS).dropped).toEqual([]);
  });

  it('drops a temperature other than 1 and a top_p under 0.95 once thinking is on, and keeps them when it is not', () => {
    expect(judge({ reasoning_effort: 'medium', temperature: 0.2, top_p: 0.5 }, ANTHROPIC_PARAMS).dropped).toEqual(['temperature', 'top_p']);
    expect(judge({ reasoning_effort: 'medium', temperature: 1, top_p: 0.96 }, ANTHROPIC_PARAMS).dropped).toEqual([]);
    expect(judge({ reasoning_effort: 'none', temperature: 0.2 }, ANTHROPIC_PARAMS).dropped).toEqual([]);
  });

  it('is dropped by Bedrock Converse', () => {
    expect(judge({ reasoning_effort: 'high' }, BEDROCK_PARAMS).dropped).toEqual(['reasoning_effort']);
  });
});

describe('Anthropic: response_format and tools', () => {
  it('honours a json_schema response_format (mapped to output_config.format) and refuses JSON mode without a schema', () => {
    expect(judge({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } } }, ANTHROPIC_PARAMS)).toEqual({ dropped: [], refused: null });
    const err = refusal({ response_format: { type: 'json_object' } }, ANTHROPIC_PARAMS);
    expect(err.param).toBe('response_format');
    expect(err.message).toContain('Anthropic');
    expect(refusal({ response_format: 'json' }, ANTHROPIC_PARAMS).param).toBe('response_format');
    // A json_schema format without its schema would reach Anthropic as no format at all.
    expect(refusal({ response_format: { type: 'json_schema', json_schema: { name: 'a' } } }, ANTHROPIC_PARAMS).param).toBe('response_format');
  });

  it('carries parallel_tool_calls', () => {
    expect(judge({ parallel_tool_calls: false }, ANTHROPIC_PARAMS)).toEqual({ dropped: [], refused: null });
  });
});

describe('Bedrock Converse: response_format', () => {
  it('refuses any response_format but text', () => {
    for (const format of [{ type: 'json_object' }, { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } }]) {
      const err = refusal({ response_format: format }, BEDROCK_PARAMS);
      expect(err.param).toBe('response_format');
      expect(err.message).toContain('Bedrock Converse');
    }
  });
});

describe('Gemini: the fields it maps', () => {
  it('carries seed, penalties, response_format and reasoning_effort: its translation validates their values', () => {
    for (const field of ['seed', 'presence_penalty', 'frequency_penalty', 'response_format', 'reasoning_effort']) expect(GEMINI_PARAMS.carried.has(field)).toBe(true);
    expect(judge({ seed: 7, presence_penalty: 0.5, frequency_penalty: -1, response_format: { type: 'json_object' }, reasoning_effort: 'high' }, GEMINI_PARAMS)).toEqual({ dropped: [], refused: null });
    expect(judge({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } } }, GEMINI_PARAMS)).toEqual({ dropped: [], refused: null });
    expect(judge({ seed: 1.5, response_format: { type: 'yaml' } }, GEMINI_PARAMS)).toEqual({ dropped: [], refused: null });
  });

  it('drops parallel_tool_calls and prediction', () => {
    expect(judge({ parallel_tool_calls: false, prediction: { type: 'content', content: 'x' } }, GEMINI_PARAMS)).toEqual({ dropped: ['parallel_tool_calls', 'prediction'], refused: null });
  });
});

describe('dropRefused', () => {
  it('refuses a drop with UNSUPPORTED_PARAMETER naming the field and the provider', () => {
    const err = dropRefused('seed', 'Anthropic');
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', status: 400, param: 'seed', retryable: false });
    expect(err.message).toContain('`seed`');
    expect(err.message).toContain('(Anthropic)');
    expect(err.message).toContain('unsupported_params: "refuse"');
  });

  it('names the translation when the provider is not known', () => {
    const err = dropRefused('verbosity', null);
    expect(err).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', status: 400, param: 'verbosity' });
    expect(err.message).toContain('the translation to the model\'s provider');
  });
});

import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { UNKNOWN_SIGNATURE } from './gemini-contents.js';
import { toGeminiRequest } from './gemini-request.js';

const user = (content: unknown) => ({ role: 'user', content });

function translate(body: Record<string, unknown>) {
  return toGeminiRequest({ model: 'm', messages: [user('Hi')], ...body });
}

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    translate(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('INVALID_REQUEST');
    expect((err as GatewayError).retryable).toBe(false);
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } };

describe('messages', () => {
  it('collects system and developer messages into systemInstruction, in order', () => {
    const request = translate({ messages: [{ role: 'system', content: 'One.' }, user('Hi'), { role: 'developer', content: [{ type: 'text', text: 'Two.' }] }] });
    expect(request.systemInstruction).toEqual({ parts: [{ text: 'One.' }, { text: 'Two.' }] });
    expect(request.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
  });

  it('maps assistant to model and merges consecutive turns of one role', () => {
    const request = translate({ messages: [user('a'), user([{ type: 'text', text: 'b' }]), { role: 'assistant', content: 'c' }, { role: 'assistant', content: [{ type: 'text', text: 'd' }] }, user('e')] });
    expect(request.contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ text: 'c' }, { text: 'd' }] },
      { role: 'user', parts: [{ text: 'e' }] },
    ]);
  });

  it('turns images into inlineData (data URL) or fileData (http URL, type from the extension)', () => {
    const request = translate({
      messages: [
        user([
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'image_url', image_url: { url: 'data:image/svg+xml,%3Csvg%2F%3E' } },
        ]),
      ],
    });
    expect(request.contents[0]?.parts).toEqual([
      { text: 'What is this?' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
    ]);
  });

  it('refuses images it cannot give Gemini, naming the part', () => {
    expect(refusal({ messages: [user([{ type: 'image_url', image_url: { url: 'https://example.com/image' } }])] }).param).toBe('messages[0].content[0].image_url.url');
    expect(refusal({ messages: [user([{ type: 'image_url', image_url: { url: 'https://example.com/a.gif' } }])] }).param).toBe('messages[0].content[0].image_url.url');
    expect(refusal({ messages: [user([{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }])] }).param).toBe('messages[0].content[0].image_url.url');
    expect(refusal({ messages: [user([{ type: 'image_url', image_url: { url: 'data:;base64,AAAA' } }])] }).param).toBe('messages[0].content[0].image_url.url');
    expect(refusal({ messages: [user([{ type: 'file', file: { file_id: 'file-1' } }])] }).param).toBe('messages[0].content[0].file');
    expect(refusal({ messages: [user([{ type: 'input_audio', input_audio: { data: 'x', format: 'flac' } }])] }).param).toBe('messages[0].content[0].input_audio.format');
    expect(refusal({ messages: [user([{ type: 'video', video: {} }])] }).param).toBe('messages[0].content[0].type');
    expect(refusal({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }, user('x')] }).param).toBe('messages[0].content[0]');
  });

  it('replays assistant tool calls as functionCall parts and tool results as functionResponse parts in a user turn', () => {
    const request = translate({
      tools: [weather],
      messages: [
        user('Weather in Paris and Oslo?'),
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: 'noon' }] },
        user('Thanks'),
      ],
    });
    expect(request.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Oslo?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: UNKNOWN_SIGNATURE },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }, { functionResponse: { name: 'get_time', response: { content: 'noon' } } }, { text: 'Thanks' }],
      },
    ]);
  });

  it('names a tool result after the latest earlier call with its id, and keeps JSON that is not an object as text', () => {
    const request = translate({
      messages: [
        user('go'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'first', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '[1,2]' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'second', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '42' },
      ],
    });
    const responses = request.contents.flatMap((c) => c.parts).filter((p) => p.functionResponse).map((p) => p.functionResponse);
    expect(responses).toEqual([
      { name: 'first', response: { content: '[1,2]' } },
      { name: 'second', response: { content: '42' } },
    ]);
  });

  it('refuses a tool result for no known call and arguments that are not a JSON object', () => {
    expect(refusal({ messages: [user('x'), { role: 'tool', tool_call_id: 'call_9', content: 'r' }] }).param).toBe('messages[1].tool_call_id');
    const badArgs = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"city":' } }] };
    expect(refusal({ messages: [user('x'), badArgs] }).param).toBe('messages[1].tool_calls[0].function.arguments');
    const arrayArgs = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] };
    expect(refusal({ messages: [user('x'), arrayArgs] }).param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('refuses a conversation with nothing but system messages', () => {
    expect(refusal({ messages: [{ role: 'system', content: 'Only rules.' }] }).param).toBe('messages');
  });
});

describe('tools and tool_choice', () => {
  it('declares functions with their schema in Gemini form', () => {
    const request = translate({ tools: [weather, { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }] });
    expect(request.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
          { name: 'now' },
        ],
      },
    ]);
    expect(request.toolConfig).toBeUndefined();
  });

  it('maps tool_choice to functionCallingConfig', () => {
    expect(translate({ tools: [weather], tool_choice: 'auto' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(translate({ tools: [weather], tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(translate({ tools: [weather], tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(translate({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
  });

  it('maps allowed_tools: required as ANY with the names, auto by offering only those tools', () => {
    const other = { type: 'function', function: { name: 'other' } };
    const allowed = (mode: string) => ({ type: 'allowed_tools', allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'get_weather' } }] } });
    const required = translate({ tools: [weather, other], tool_choice: allowed('required') });
    expect(required.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
    expect(required.tools?.[0]?.functionDeclarations.map((d) => d.name)).toEqual(['get_weather']);
    const auto = translate({ tools: [weather, other], tool_choice: allowed('auto') });
    expect(auto.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(auto.tools?.[0]?.functionDeclarations.map((d) => d.name)).toEqual(['get_weather']);
  });

  it('refuses tools and choices Gemini has no form for', () => {
    expect(refusal({ tools: [{ type: 'custom', custom: { name: 'x' } }] }).param).toBe('tools[0].type');
    expect(refusal({ tools: [weather], tool_choice: 'sometimes' }).param).toBe('tool_choice');
    expect(refusal({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { not: { type: 'string' } } } } } }] }).param).toBe('tools[0].function.parameters.properties.a.not');
  });
});

describe('generation settings', () => {
  it('maps every sampling field to generationConfig', () => {
    const request = translate({
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END', 'STOP'],
      n: 1,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      reasoning_effort: 'low',
    });
    expect(request.generationConfig).toEqual({
      maxOutputTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END', 'STOP'],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      thinkingConfig: { thinkingLevel: 'low' },
    });
  });

  it('prefers max_completion_tokens, takes a single stop string, and sends no empty generationConfig', () => {
    expect(translate({ max_tokens: 100, max_completion_tokens: 50, stop: 'END' }).generationConfig).toEqual({ maxOutputTokens: 50, stopSequences: ['END'] });
    expect(translate({ temperature: 0 }).generationConfig).toEqual({ temperature: 0 });
    expect(translate({ user: 'u-1', metadata: { a: 'b' }, parallel_tool_calls: false, store: false, logprobs: false }).generationConfig).toBeUndefined();
  });

  it('maps response_format to JSON output, with the schema when given', () => {
    expect(translate({ response_format: { type: 'text' } }).generationConfig).toBeUndefined();
    expect(translate({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { answer: { type: 'string' }, score: { type: ['number', 'null'] } }, required: ['answer', 'score'], additionalProperties: false };
    expect(translate({ response_format: { type: 'json_schema', json_schema: { name: 'a', strict: true, schema } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING' }, score: { type: 'NUMBER', nullable: true } }, required: ['answer', 'score'] },
    });
    expect(refusal({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object', patternProperties: {} } } } }).param).toBe('response_format.json_schema.schema.patternProperties');
    expect(refusal({ response_format: { type: 'yaml' } }).param).toBe('response_format.type');
  });

  it('no longer refuses what Gemini cannot honour: that is judged at admission, and the fields are left out', () => {
    // gemini-params.ts refuses or drops these before the adapter runs; the translation maps only what it carries.
    const plain = translate({});
    for (const body of [
      { n: 2 },
      { logprobs: true },
      { top_logprobs: 3 },
      { logit_bias: { '1': 5 } },
      { audio: { voice: 'alloy', format: 'wav' } },
      { modalities: ['text', 'audio'] },
      { prediction: { type: 'content', content: 'x' } },
      { web_search_options: {} },
      { functions: [] },
      { function_call: 'auto' },
      { verbosity: 'low' },
      { foo_bar: 1 },
    ]) {
      expect(translate(body)).toEqual(plain);
    }
    expect(plain.generationConfig).toBeUndefined();
  });

  it('still refuses values of the fields it maps, naming the field', () => {
    expect(refusal({ seed: 1.5 }).param).toBe('seed');
    expect(refusal({ seed: '7' }).param).toBe('seed');
    expect(refusal({ presence_penalty: 3 }).param).toBe('presence_penalty');
    expect(refusal({ frequency_penalty: -2.5 }).param).toBe('frequency_penalty');
    expect(refusal({ frequency_penalty: 'high' }).param).toBe('frequency_penalty');
    expect(refusal({ response_format: 'json' }).param).toBe('response_format');
    expect(refusal({ response_format: { type: 'yaml' } }).param).toBe('response_format.type');
    expect(refusal({ reasoning_effort: 'extreme' }).param).toBe('reasoning_effort');
  });

  it('sends the safety settings it is given', () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }];
    expect(toGeminiRequest({ model: 'm', messages: [user('x')] }, { safetySettings }).safetySettings).toEqual(safetySettings);
  });
});

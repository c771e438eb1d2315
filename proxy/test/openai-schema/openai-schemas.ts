/**
 * JSON Schemas of the OpenAI answers the gateway produces, written from OpenAI's published
 * OpenAPI document (github.com/openai/openai-openapi, `openapi.yaml`, version 2.3.0 of its
 * `info.version`; component names below are the document's). No npm package ships that document,
 * so these are transcriptions, not copies: each keeps the component's required fields, types and
 * closed enums — the parts a client or SDK relies on — and leaves out descriptions and the
 * variants the gateway never sends (audio, annotations' inner shapes, built-in tool calls).
 * Extra properties are allowed, as in the document.
 */
type Schema = Record<string, unknown>;

const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const int: Schema = { type: 'integer' };
const str: Schema = { type: 'string' };
const constant = (value: string): Schema => ({ type: 'string', enum: [value] });
const object = (required: string[], properties: Record<string, Schema>): Schema => ({ type: 'object', required, properties });

/** ErrorResponse / Error. */
export const errorResponse = object(['error'], {
  error: object(['type', 'message', 'param', 'code'], { code: nullable(str), message: str, param: nullable(str), type: str }),
});

/** ChatCompletionTokenLogprob. */
const tokenLogprob = object(['token', 'logprob', 'bytes', 'top_logprobs'], {
  token: str,
  logprob: { type: 'number' },
  bytes: nullable({ type: 'array', items: int }),
  top_logprobs: { type: 'array', items: object(['token', 'logprob', 'bytes'], { token: str, logprob: { type: 'number' }, bytes: nullable({ type: 'array', items: int }) }) },
});

/** CompletionUsage. */
const completionUsage = object([], {
  completion_tokens: int,
  prompt_tokens: int,
  total_tokens: int,
  completion_tokens_details: object([], { accepted_prediction_tokens: int, audio_tokens: int, reasoning_tokens: int, rejected_prediction_tokens: int }),
  prompt_tokens_details: object([], { audio_tokens: int, cached_tokens: int }),
});

/** ServiceTier. */
const serviceTier = nullable({ type: 'string', enum: ['auto', 'default', 'flex', 'scale', 'priority', 'fast'] });

const finishReason = { type: 'string', enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'] };

/** ChatCompletionMessageToolCall. */
const toolCall = object(['id', 'type', 'function'], { id: str, type: constant('function'), function: object(['name', 'arguments'], { name: str, arguments: str }) });

/** CreateChatCompletionResponse (with ChatCompletionResponseMessage). */
export const chatCompletion = object(['choices', 'created', 'id', 'model', 'object'], {
  id: str,
  choices: {
    type: 'array',
    items: object(['finish_reason', 'index', 'message', 'logprobs'], {
      finish_reason: finishReason,
      index: int,
      message: object(['role', 'content', 'refusal'], {
        content: nullable(str),
        refusal: nullable(str),
        tool_calls: { type: 'array', items: toolCall },
        role: constant('assistant'),
      }),
      logprobs: nullable(object(['content', 'refusal'], { content: nullable({ type: 'array', items: tokenLogprob }), refusal: nullable({ type: 'array', items: tokenLogprob }) })),
    }),
  },
  created: int,
  model: str,
  service_tier: serviceTier,
  system_fingerprint: str,
  object: constant('chat.completion'),
  usage: completionUsage,
});

/** CreateChatCompletionStreamResponse (with ChatCompletionStreamResponseDelta). */
export const chatCompletionChunk = object(['choices', 'created', 'id', 'model', 'object'], {
  id: str,
  choices: {
    type: 'array',
    items: object(['delta', 'finish_reason', 'index'], {
      delta: object([], {
        content: nullable(str),
        tool_calls: { type: 'array', items: object(['index'], { index: int, id: str, type: constant('function'), function: object([], { name: str, arguments: str }) }) },
        role: { type: 'string', enum: ['developer', 'system', 'user', 'assistant', 'tool'] },
        refusal: nullable(str),
      }),
      logprobs: nullable(object(['content', 'refusal'], { content: nullable({ type: 'array', items: tokenLogprob }), refusal: nullable({ type: 'array', items: tokenLogprob }) })),
      finish_reason: nullable(finishReason),
      index: int,
    }),
  },
  created: int,
  model: str,
  service_tier: serviceTier,
  system_fingerprint: str,
  object: constant('chat.completion.chunk'),
  usage: nullable(completionUsage),
});

/** CreateEmbeddingResponse (with Embedding; `embedding` is a base64 string when asked for). */
export const embeddingsList = object(['object', 'model', 'data', 'usage'], {
  data: { type: 'array', items: object(['index', 'object', 'embedding'], { index: int, embedding: { anyOf: [{ type: 'array', items: { type: 'number' } }, str] }, object: constant('embedding') }) },
  model: str,
  object: constant('list'),
  usage: object(['prompt_tokens', 'total_tokens'], { prompt_tokens: int, total_tokens: int }),
});

/** ListModelsResponse (with Model). */
export const modelsList = object(['object', 'data'], {
  object: constant('list'),
  data: { type: 'array', items: object(['id', 'object', 'created', 'owned_by'], { id: str, created: int, object: constant('model'), owned_by: str }) },
});

const itemStatus = { type: 'string', enum: ['in_progress', 'completed', 'incomplete'] };

/** OutputTextContent | RefusalContent (OutputMessageContent). */
const outputContent: Schema = {
  oneOf: [
    object(['type', 'text', 'annotations', 'logprobs'], { type: constant('output_text'), text: str, annotations: { type: 'array' }, logprobs: { type: 'array' } }),
    object(['type', 'refusal'], { type: constant('refusal'), refusal: str }),
  ],
};

/** OutputMessage | FunctionToolCall: the OutputItem variants the gateway produces. */
const outputItem: Schema = {
  oneOf: [
    object(['id', 'type', 'role', 'content', 'status'], { id: str, type: constant('message'), role: constant('assistant'), content: { type: 'array', items: outputContent }, status: itemStatus }),
    object(['type', 'call_id', 'name', 'arguments'], { id: str, type: constant('function_call'), call_id: str, name: str, arguments: str, status: itemStatus }),
  ],
};

/** ResponseUsage. */
const responseUsage = object(['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'], {
  input_tokens: int,
  input_tokens_details: object(['cached_tokens', 'cache_write_tokens'], { cached_tokens: int, cache_write_tokens: int }),
  output_tokens: int,
  output_tokens_details: object(['reasoning_tokens'], { reasoning_tokens: int }),
  total_tokens: int,
});

/** ResponseErrorCode. */
const responseErrorCode = {
  type: 'string',
  enum: [
    'server_error',
    'rate_limit_exceeded',
    'invalid_prompt',
    'data_residency_mismatch',
    'bio_policy',
    'vector_store_timeout',
    'invalid_image',
    'invalid_image_format',
    'invalid_base64_image',
    'invalid_image_url',
    'image_too_large',
    'image_too_small',
    'image_parse_error',
    'image_content_policy_violation',
    'invalid_image_mode',
    'image_file_too_large',
    'unsupported_image_media_type',
    'empty_image_file',
    'failed_to_download_image',
    'image_file_not_found',
  ],
};

/** Response (ModelResponseProperties + ResponseProperties + its own properties). */
export const response = object(['id', 'object', 'created_at', 'error', 'incomplete_details', 'instructions', 'model', 'tools', 'output', 'parallel_tool_calls', 'metadata', 'tool_choice', 'temperature', 'top_p'], {
  id: str,
  object: constant('response'),
  status: { type: 'string', enum: ['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete'] },
  created_at: { type: 'number' },
  completed_at: nullable({ type: 'number' }),
  error: nullable(object(['code', 'message'], { code: responseErrorCode, message: str })),
  incomplete_details: nullable(object([], { reason: { type: 'string', enum: ['max_output_tokens', 'content_filter'] } })),
  output: { type: 'array', items: outputItem },
  instructions: nullable({ anyOf: [str, { type: 'array' }] }),
  // The component does not mark `usage` nullable, but the document's own examples (those of
  // ResponseFailedEvent, ResponseCreatedEvent) show `"usage": null` before the counts exist.
  usage: nullable(responseUsage),
  parallel_tool_calls: { type: 'boolean' },
  max_output_tokens: nullable(int),
  previous_response_id: nullable(str),
  model: str,
  background: nullable({ type: 'boolean' }),
  tools: { type: 'array' },
  metadata: nullable({ type: 'object', additionalProperties: str }),
  temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
  top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }),
  truncation: nullable({ type: 'string', enum: ['auto', 'disabled'] }),
});

const seq = { sequence_number: int };
const responseEvent = (type: string): Schema => object(['type', 'response', 'sequence_number'], { type: constant(type), response, ...seq });
const itemEvent = (type: string): Schema => object(['type', 'output_index', 'item', 'sequence_number'], { type: constant(type), output_index: int, item: outputItem, ...seq });
const partEvent = (type: string): Schema =>
  object(['type', 'item_id', 'output_index', 'content_index', 'part', 'sequence_number'], { type: constant(type), item_id: str, output_index: int, content_index: int, part: outputContent, ...seq });

/** The ResponseStreamEvent variants the gateway sends, by `type`. */
export const responseStreamEvents: Record<string, Schema> = {
  'response.created': responseEvent('response.created'),
  'response.in_progress': responseEvent('response.in_progress'),
  'response.completed': responseEvent('response.completed'),
  'response.incomplete': responseEvent('response.incomplete'),
  'response.failed': responseEvent('response.failed'),
  'response.output_item.added': itemEvent('response.output_item.added'),
  'response.output_item.done': itemEvent('response.output_item.done'),
  'response.content_part.added': partEvent('response.content_part.added'),
  'response.content_part.done': partEvent('response.content_part.done'),
  'response.output_text.delta': object(['type', 'item_id', 'output_index', 'content_index', 'delta', 'sequence_number', 'logprobs'], {
    type: constant('response.output_text.delta'),
    item_id: str,
    output_index: int,
    content_index: int,
    delta: str,
    logprobs: { type: 'array' },
    ...seq,
  }),
  'response.output_text.done': object(['type', 'item_id', 'output_index', 'content_index', 'text', 'sequence_number', 'logprobs'], {
    type: constant('response.output_text.done'),
    item_id: str,
    output_index: int,
    content_index: int,
    text: str,
    logprobs: { type: 'array' },
    ...seq,
  }),
  'response.refusal.delta': object(['type', 'item_id', 'output_index', 'content_index', 'delta', 'sequence_number'], { type: constant('response.refusal.delta'), item_id: str, output_index: int, content_index: int, delta: str, ...seq }),
  'response.refusal.done': object(['type', 'item_id', 'output_index', 'content_index', 'refusal', 'sequence_number'], { type: constant('response.refusal.done'), item_id: str, output_index: int, content_index: int, refusal: str, ...seq }),
  'response.function_call_arguments.delta': object(['type', 'item_id', 'output_index', 'delta', 'sequence_number'], { type: constant('response.function_call_arguments.delta'), item_id: str, output_index: int, delta: str, ...seq }),
  'response.function_call_arguments.done': object(['type', 'item_id', 'name', 'output_index', 'arguments', 'sequence_number'], {
    type: constant('response.function_call_arguments.done'),
    item_id: str,
    name: str,
    output_index: int,
    arguments: str,
    ...seq,
  }),
  /** ResponseErrorEvent: its `code` is a free string, so the gateway's own code goes there. */
  error: object(['type', 'code', 'message', 'param', 'sequence_number'], { type: constant('error'), code: nullable(str), message: str, param: nullable(str), ...seq }),
};

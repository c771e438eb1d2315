/**
 * OpenAI Chat Completions request types: the internal request every inbound protocol produces and
 * every adapter consumes. They say what validation guarantees (protocols/openai-chat/
 * validate-chat.ts, or the translation of another protocol): the known fields have their
 * documented types (OpenAI's OpenAPI document, CreateChatCompletionRequest and the
 * ChatCompletionRequest*Message schemas); unknown fields pass through to providers that forward
 * the body, hence the index signatures.
 */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatTextPart {
  type: 'text';
  text: string;
}

export interface ChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** Any part has a `type`; text and image parts are the ones the gateway reads or translates. */
export type ChatContentPart = ChatTextPart | ChatImagePart | { type: string; [field: string]: unknown };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * A block of a model's reasoning as Anthropic's extended thinking returns it, kept so it can be
 * sent back to the provider that made it (which checks its signature): on an assistant message it
 * is LiteLLM's `thinking_blocks`, which chat clients may write; carried from a Responses reasoning
 * item it is set out of sight of JSON (request/thinking-blocks.ts).
 */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** OpenAI's reasoning efforts, as Chat Completions and Responses take them. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export interface ChatMessage {
  role: ChatRole;
  /** Null or absent only on an assistant message with tool calls. */
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  /** On a `tool` message: the call it answers. */
  tool_call_id?: string;
  refusal?: string | null;
  /** On an assistant message: the reasoning it came with, to replay to the provider that made it. */
  thinking_blocks?: ThinkingBlock[];
  [field: string]: unknown;
}

export interface ChatFunction {
  name: string;
  description?: string;
  /** A JSON Schema object. */
  parameters?: Record<string, unknown>;
  strict?: boolean | null;
}

export interface ChatTool {
  type: 'function' | (string & {});
  function?: ChatFunction;
  [field: string]: unknown;
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatResponseFormat {
  type: 'text' | 'json_object' | 'json_schema' | (string & {});
  json_schema?: { name: string; schema?: Record<string, unknown>; strict?: boolean | null; description?: string };
}

/** CreateChatCompletionRequest, as far as the gateway reads or writes it. */
export interface ChatCompletionBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  tools?: ChatTool[] | null;
  tool_choice?: ChatToolChoice | null;
  parallel_tool_calls?: boolean | null;
  response_format?: ChatResponseFormat | null;
  /** Unchecked on a chat client's body (the provider judges it); translations write a ReasoningEffort. */
  reasoning_effort?: ReasoningEffort | (string & {}) | null;
  user?: string;
  [field: string]: unknown;
}

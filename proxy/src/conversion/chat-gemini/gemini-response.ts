import { Errors } from '@gateway/shared';
import type { Usage } from '../../providers/adapter.js';
import { BLOCKED, mapFinishReason, type Finish } from './gemini-finish.js';
import { toUsage } from './gemini-usage.js';
import type { GeminiResponse } from '../../providers/gemini/gemini-wire.js';

/**
 * A Gemini `GenerateContentResponse` as an OpenAI `chat.completion`: the first candidate's text
 * parts are the message content (thought summaries are left out), its `functionCall` parts the
 * tool calls. Gemini gives calls no id, so each gets `call_<n>`, numbered on from the calls
 * already in the conversation: unique within it, and the same every time the answer is read.
 */
export interface AnswerContext {
  /** OpenAI's `id` for the answer (chatcmpl-…). */
  id: string;
  /** The model id the client asked for. */
  model: string;
  created: number;
  /** Number given to the answer's first tool call. */
  firstCall: number;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface AnswerPieces {
  text: string;
  calls: { name: string; arguments: string }[];
}

/** Text and function calls of one candidate's parts (or of one streamed piece of them). */
export function readParts(parts: unknown): AnswerPieces {
  const pieces: AnswerPieces = { text: '', calls: [] };
  if (!Array.isArray(parts)) return pieces;
  for (const part of parts as Record<string, unknown>[]) {
    if (part === null || typeof part !== 'object') continue;
    if (typeof part.text === 'string' && part.thought !== true) pieces.text += part.text;
    const call = part.functionCall as { name?: unknown; args?: unknown } | undefined;
    if (call !== undefined && call !== null && typeof call.name === 'string') {
      pieces.calls.push({ name: call.name, arguments: JSON.stringify(call.args ?? {}) });
    }
  }
  return pieces;
}

export function toolCallId(n: number): string {
  return `call_${n}`;
}

export interface Completion {
  body: Record<string, unknown>;
  usage: Usage;
  finish: Finish;
}

export function toChatCompletion(response: GeminiResponse, ctx: AnswerContext, provider: string): Completion {
  const candidate = response.candidates?.[0];
  let finish: Finish;
  let pieces: AnswerPieces = { text: '', calls: [] };
  if (candidate === undefined) {
    if (response.promptFeedback?.blockReason === undefined) throw Errors.providerNoCandidate(provider);
    finish = BLOCKED;
  } else {
    pieces = readParts(candidate.content?.parts);
    finish = mapFinishReason(candidate.finishReason, pieces.calls.length > 0);
  }
  const message: Record<string, unknown> = { role: 'assistant', content: pieces.text, refusal: null };
  if (pieces.calls.length > 0) {
    if (pieces.text === '') message.content = null;
    message.tool_calls = pieces.calls.map((call, k): ToolCall => ({ id: toolCallId(ctx.firstCall + k), type: 'function', function: call }));
  }
  const { usage, openai } = toUsage(response.usageMetadata);
  return {
    body: {
      id: ctx.id,
      object: 'chat.completion',
      created: ctx.created,
      model: ctx.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish.openai }],
      usage: openai,
    },
    usage,
    finish,
  };
}

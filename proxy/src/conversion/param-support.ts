import { Errors, GatewayError } from '@gateway/shared';
import type { ChatCompletionBody } from '../request/openai-chat.js';

/**
 * Which parameters of the internal request (an OpenAI Chat Completions body) a provider that does
 * not speak Chat Completions can carry, as data each provider folder declares once: the fields its
 * translation maps, the ones it drops because they only tune the answer, and the ones it refuses
 * because the answer would not have the shape the client asked for. Judged at admission for every
 * target of a route (pipeline/steps/translation.ts), before anything is reserved or counted, so the
 * same body gets the same answer whichever target a weighted route draws.
 */
export interface ParamRule {
  /** 'drop': only tunes the answer, left out and named; 'refuse': would change the answer's shape. */
  verdict: 'drop' | 'refuse';
  /** Why, ending the refusal's message ("it returns one choice per request"). */
  why: string;
  /** A value the translation honours after all: one that asks for nothing (n: 1, logprobs: false), or one it maps. */
  honoured?: (value: unknown) => boolean;
}

export interface ParamTable {
  /** The provider as messages name it ("Anthropic", "Bedrock Converse"). */
  provider: string;
  /** Fields the translation carries (mapped or read); any other field is dropped unless ruled on. */
  carried: ReadonlySet<string>;
  rules: Readonly<Record<string, ParamRule>>;
  /**
   * What the provider cannot take in the request's values (an image by URL for a provider that
   * fetches none, a content part it has no block for): the refusal its translation would throw
   * when the request is written, found at admission instead. Run only on routes of several
   * targets, where the draw would otherwise decide between an answer and a refusal; a route of one
   * target refuses the same body the same way when the request is written.
   */
  refusal?: (chat: Readonly<ChatCompletionBody>) => GatewayError | null;
  /**
   * Fields carried in general that this body's other values leave out (Anthropic's thinking with a
   * tool choice that forces a tool, a temperature with thinking on): dropped and named as any drop.
   */
  dropsOf?: (chat: Readonly<ChatCompletionBody>) => readonly string[];
}

export interface ParamJudgment {
  /** Fields left out, in the body's order. */
  dropped: string[];
  /** The first field that would change the answer's shape, refused; null when none. */
  refused: GatewayError | null;
}

const NOTHING: ParamJudgment = { dropped: [], refused: null };

/** The body against a provider's table: a walk over the body's own fields, no copy. */
export function judgeParams(chat: Readonly<ChatCompletionBody>, table: ParamTable): ParamJudgment {
  let dropped: string[] | null = null;
  for (const field in chat) {
    if (table.carried.has(field)) continue;
    const value = chat[field];
    if (value === undefined || value === null) continue;
    const rule = table.rules[field];
    if (rule?.honoured?.(value) === true) continue;
    if (rule?.verdict === 'refuse') {
      return { dropped: dropped ?? [], refused: Errors.unsupportedParameter(field, `\`${field}\` is not supported by this model's provider (${table.provider}): ${rule.why}.`) };
    }
    (dropped ??= []).push(field);
  }
  const also = table.dropsOf?.(chat);
  if (also !== undefined && also.length > 0) dropped = [...(dropped ?? []), ...also];
  return dropped === null ? NOTHING : { dropped, refused: null };
}

/** The refusal a translation throws for the body, or null when it writes it (its result is not kept). */
export function refusalOf(translate: () => unknown): GatewayError | null {
  try {
    translate();
    return null;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

/** Refused: a drop the project turned into a refusal (`unsupported_params: "refuse"`). */
export function dropRefused(field: string, provider: string | null): GatewayError {
  const by = provider === null ? 'the translation to the model\'s provider' : `this model's provider (${provider})`;
  return Errors.unsupportedParameter(field, `\`${field}\` cannot be carried by ${by}, and this project refuses parameters that would be dropped (unsupported_params: "refuse").`);
}

// ---- honoured values shared by the tables ----

export const isOne = (value: unknown): boolean => value === 1;
export const isFalse = (value: unknown): boolean => value === false;
export const isZero = (value: unknown): boolean => value === 0;
export const isEmptyObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
export const textOnly = (value: unknown): boolean => Array.isArray(value) && value.every((m) => m === 'text');

/** The rules every one-answer, text-only provider shares. */
export const ONE_TEXT_ANSWER: Readonly<Record<string, ParamRule>> = {
  n: { verdict: 'refuse', why: 'it returns one choice per request', honoured: isOne },
  logprobs: { verdict: 'refuse', why: 'it does not return log-probabilities', honoured: isFalse },
  top_logprobs: { verdict: 'refuse', why: 'it does not return log-probabilities', honoured: isZero },
  audio: { verdict: 'refuse', why: 'it does not produce audio' },
  modalities: { verdict: 'refuse', why: 'it produces text only', honoured: textOnly },
  functions: { verdict: 'refuse', why: 'send `tools` instead of the deprecated `functions`' },
  function_call: { verdict: 'refuse', why: 'send `tool_choice` instead of the deprecated `function_call`' },
  web_search_options: { verdict: 'refuse', why: 'it runs no web search for Chat Completions requests' },
  presence_penalty: { verdict: 'drop', why: 'it has no repetition penalties', honoured: isZero },
  frequency_penalty: { verdict: 'drop', why: 'it has no repetition penalties', honoured: isZero },
  logit_bias: { verdict: 'drop', why: 'it has no token biasing', honoured: isEmptyObject },
};

/** Fields every translation reads: the request's own frame, never dropped. */
export const FRAME = ['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'tools', 'tool_choice', 'user'] as const;

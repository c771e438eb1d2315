import type { ParsedRequest } from '../protocol.js';
import { scanMessagesRequest } from './scan-request.js';
import { invalid, isObject, present } from './request-fields.js';
import { endUserOf, maxTokensOf } from '../../conversion/messages-chat/messages-to-chat.js';
import { messagesChat } from '../../conversion/messages-chat/messages-chat.js';

/**
 * An Anthropic Messages body, validated and translated into the internal request (an OpenAI Chat
 * Completions body). What maps is mapped (system messages anywhere, thinking and effort as
 * reasoning effort, JSON outputs as a json_schema response format); what only tunes the answer is
 * left out and named (`dropped`: context management, top_k, service tier, fields this gateway does
 * not know); what would change the answer is refused with the field named (server-run tools and
 * MCP servers, containers). Prompt cache breakpoints are carried for the adapters that cache
 * prompts (cache-hints.ts). docs/endpoints.md lists the mapping.
 */
export interface MessagesRequest extends ParsedRequest {
  /**
   * The client's own body, validated. Kept for a provider that speaks Messages natively: it may
   * be sent as it came (`anthropicRaw`) instead of the translation in `chat`.
   */
  anthropic: Readonly<Record<string, unknown>>;
  anthropicRaw: Buffer;
}

/** `create` is POST /v1/messages; `count` is count_tokens, where max_tokens is not asked for. */
export type MessagesPurpose = 'create' | 'count';

/**
 * `nativeRoute(model)`: every provider of the model's route takes the body as it came. Then the
 * body is not translated but read only for what the gateway needs (scan-request.ts): the
 * translation waits in `translate` for a step that needs it after all (translateScanned), and
 * what it would refuse is the provider's to judge.
 */
export function parseMessagesRequest(body: unknown, raw: Buffer, purpose: MessagesPurpose = 'create', nativeRoute?: (model: string) => boolean): MessagesRequest {
  if (nativeRoute === undefined || !isObject(body) || typeof body.model !== 'string' || !nativeRoute(body.model)) return messagesChat.toRequest(body, { raw, purpose });
  const maxTokens = maxTokensOf(body.max_tokens, purpose);
  if (present(body.stream) && typeof body.stream !== 'boolean') throw invalid('stream', 'must be a boolean');
  const { chat, model, stream } = scanMessagesRequest(body, maxTokens);
  const user = endUserOf(body.metadata);
  if (user !== null) chat.user = user;
  return { chat, raw: null, model, stream, wantsUsage: true, maxTokens, anthropic: body, anthropicRaw: raw, translate: () => messagesChat.toRequest(body, { raw, purpose }) };
}


import type { CompletionResult } from '../../request/internal-request.js';
import { countsFromChatUsage, messageItem, newId, outcomeOf, reasoningItem, responseObject, summaryWanted, toolCallItem, type ContentPart, type ItemStatus } from './response-object.js';
import { readThinkingBlocks } from '../../request/thinking-blocks.js';
import type { ToolOrigin } from './tools.js';
import { jsonBytes } from '../../request/json-bytes.js';

/**
 * A whole `chat.completion` as a Response: the message's reasoning (`thinking_blocks`, one
 * `reasoning` item each, or `reasoning_content` as one) first, then its text (or refusal) as one
 * `message` item, then each tool call as a `function_call` item; `length` and `content_filter` make the response
 * `incomplete` with their reason. Usage comes from the completion's own counts, which the adapter
 * already read, with cached and reasoning tokens from its details.
 */
interface ChatCompletion {
  created?: unknown;
  choices?: { message?: { content?: unknown; refusal?: unknown; tool_calls?: unknown; reasoning_content?: unknown; thinking_blocks?: unknown }; finish_reason?: unknown }[];
  usage?: unknown;
}

export function renderResponse(result: CompletionResult, model: string, echo: Readonly<Record<string, unknown>>, origins?: ReadonlyMap<string, ToolOrigin>): Buffer {
  let completion: ChatCompletion = {};
  try {
    const parsed: unknown = JSON.parse(result.body.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null) completion = parsed as ChatCompletion;
  } catch {
    // The adapter checked the body is JSON; an answer without choices renders as an empty output.
  }
  const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
  const message = choice?.message ?? {};
  const finish = typeof choice?.finish_reason === 'string' ? choice.finish_reason : result.finishReason;
  const outcome = outcomeOf(finish);
  const itemStatus: ItemStatus = outcome.status === 'incomplete' ? 'incomplete' : 'completed';

  const output: Record<string, unknown>[] = reasoningItems(message, itemStatus, summaryWanted(echo));
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  const parts: ContentPart[] = [];
  const text = contentText(message.content);
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  // An empty answer is still one message with empty text, as OpenAI sends it.
  if (text !== '' || (calls.length === 0 && refusal === '')) parts.push({ type: 'output_text', text });
  if (refusal !== '') parts.push({ type: 'refusal', text: refusal });
  if (parts.length > 0) output.push(messageItem(newId('msg'), itemStatus, parts));
  for (const call of calls) {
    if (typeof call !== 'object' || call === null) continue;
    const c = call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const name = typeof c.function?.name === 'string' ? c.function.name : '';
    const args = typeof c.function?.arguments === 'string' ? c.function.arguments : '';
    output.push(toolCallItem(newId('fc'), typeof c.id === 'string' && c.id !== '' ? c.id : newId('call'), name, args, itemStatus, origins));
  }

  const counts = countsFromChatUsage(completion.usage) ?? { input: 0, output: 0, cached: 0, cacheWrite: 0, reasoning: 0 };
  // The adapter's counts are the ones billed: the Response reports the same.
  counts.input = result.usage.input;
  counts.output = result.usage.output;
  if (result.usage.cached !== undefined) counts.cached = result.usage.cached;
  if (result.usage.cacheWrite !== undefined) counts.cacheWrite = result.usage.cacheWrite;
  const created = typeof completion.created === 'number' && Number.isFinite(completion.created) ? completion.created : Math.floor(Date.now() / 1000);
  const response = responseObject(
    { id: newId('resp'), createdAt: created, status: outcome.status, incompleteDetails: outcome.incompleteDetails, model, output, usage: counts },
    echo,
  );
  return jsonBytes(response);
}

function reasoningItems(message: { reasoning_content?: unknown; thinking_blocks?: unknown }, status: ItemStatus, summary: boolean): Record<string, unknown>[] {
  const blocks = readThinkingBlocks(message.thinking_blocks);
  if (blocks !== null) return blocks.map((block) => reasoningItem(newId('rs'), status, summary && block.type === 'thinking' ? block.thinking : null, [block]));
  const text = message.reasoning_content;
  return typeof text === 'string' && text !== '' ? [reasoningItem(newId('rs'), status, summary ? text : null, null)] : [];
}

/** A chat message's content as text: a string, or the text of its parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string') text += (part as { text: string }).text;
  }
  return text;
}

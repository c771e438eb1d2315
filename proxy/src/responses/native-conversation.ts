import { Errors, GatewayError } from '@gateway/shared';
import type { ProviderAdapter, StoredResponseRequest } from '../providers/adapter.js';
import type { Cancel } from '../providers/cancel.js';
import { providerStatusError, readLimited, transportFailure } from '../providers/upstream-error.js';

/**
 * The conversation through a response a native provider keeps, read back from that provider so a
 * translated model can continue it: the chain of `previous_response_id`s walked to its start, then
 * for each response, oldest first, its input items (every page) and its output. An item already
 * taken (by id) is not taken again, so the result is the same whether the provider lists a chained
 * response's earlier turns among its input items or only its own.
 */
const MAX_CHAIN = 100;
const MAX_ITEMS = 10_000;
const PAGE = 100;

interface ItemsPage {
  data?: unknown;
  has_more?: unknown;
  last_id?: unknown;
}

export async function nativeConversation(adapter: ProviderAdapter, id: string, cancel: Cancel): Promise<unknown[]> {
  const chain: { id: string; response: Record<string, unknown> }[] = [];
  for (let at: string | null = id; at !== null; ) {
    if (chain.length === MAX_CHAIN) throw tooLong(id, `more than ${MAX_CHAIN} responses`);
    const response = await askJson(adapter, { method: 'GET', id: at, items: false, query: '', headers: null }, cancel, id);
    chain.unshift({ id: at, response });
    at = typeof response.previous_response_id === 'string' && response.previous_response_id !== '' ? response.previous_response_id : null;
  }
  const taken = new Set<string>();
  const items: unknown[] = [];
  const take = (item: unknown) => {
    const itemId = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
    if (typeof itemId === 'string') {
      if (taken.has(itemId)) return;
      taken.add(itemId);
    }
    if (items.length === MAX_ITEMS) throw tooLong(id, `more than ${MAX_ITEMS} items`);
    items.push(item);
  };
  for (const { id: responseId, response } of chain) {
    for (let after: string | null = null, more = true; more; ) {
      const query: string = `order=asc&limit=${PAGE}${after === null ? '' : `&after=${encodeURIComponent(after)}`}`;
      const page = (await askJson(adapter, { method: 'GET', id: responseId, items: true, query, headers: null }, cancel, id)) as ItemsPage;
      const data = Array.isArray(page.data) ? page.data : [];
      for (const item of data) take(item);
      more = page.has_more === true && typeof page.last_id === 'string' && data.length > 0;
      after = typeof page.last_id === 'string' ? page.last_id : null;
    }
    if (Array.isArray(response.output)) for (const item of response.output) take(item);
  }
  return items;
}

/** One of the provider's JSON answers; its 404 is the follow-up's unknown previous response. */
async function askJson(adapter: ProviderAdapter, request: StoredResponseRequest, cancel: Cancel, asked: string): Promise<Record<string, unknown>> {
  const pending = adapter.storedResponse?.(request, cancel) ?? null;
  if (pending === null) throw Errors.invalidField('previous_response_id', `The response '${asked}' is kept by the provider ${adapter.name}, which this gateway no longer sends Responses requests to.`);
  let body: Buffer;
  try {
    const answer = await pending;
    if (answer.status === 404) {
      answer.destroy();
      throw Errors.invalidField('previous_response_id', `Previous response with id '${asked}' not found.`);
    }
    if (answer.status !== 200) throw providerStatusError(adapter.name, answer.status, await readLimited(answer), answer.header('retry-after'));
    body = await answer.body();
  } catch (err) {
    throw transportFailure(adapter.name, err, cancel.aborted);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw Errors.providerNotJson(adapter.name);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw Errors.providerSentNot(adapter.name, 'a JSON object');
  return parsed as Record<string, unknown>;
}

function tooLong(id: string, what: string): GatewayError {
  return Errors.invalidField('previous_response_id', `The conversation through '${id}' holds ${what}, more than a translated model is given: continue it with a model its provider serves natively.`);
}

import { Errors, type GatewayError, type StoredItems, type StoredResponseRecord, type StoredResponseWrite } from '@gateway/shared';
import { Pool } from 'undici';
import type { ChatMessage } from '../request/openai-chat.js';
import { restoreThinking, withThinkingShown } from '../request/thinking-blocks.js';

/**
 * Responses API state the gateway keeps for a translated conversation (`store`, the default, and
 * `previous_response_id`): held by the control plane in PostgreSQL, reached over its internal
 * routes (`/internal/v1/responses/{id}`, the deployment's INTERNAL_TOKEN), since the proxy never
 * talks to PostgreSQL. The project of every read and delete is part of the request: another
 * project's id is not found. Expiry (the project's `responses.ttl_days`) is the control plane's.
 */
/** A stored response as the control plane answers it: its conversation in the internal format. */
export interface StoredResponse extends Omit<StoredResponseRecord, 'messages'> {
  messages: ChatMessage[] | null;
}

/** What the proxy writes: the route's body (StoredResponseWrite) with the id its path carries. */
export type NewStoredResponse = Omit<StoredResponseWrite, 'v'> & { id: string };

const TIMEOUT_MS = 10_000;

export class ResponseStore {
  private readonly pool: Pool;
  private readonly authorization: string;

  constructor(baseUrl: string, token: string) {
    this.pool = new Pool(baseUrl, { connections: 16, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS, connectTimeout: 3_000 });
    this.authorization = `Bearer ${token}`;
  }

  async put(record: NewStoredResponse): Promise<void> {
    const { id, ...fields } = record;
    // The reasoning a turn carries for its provider is kept with it (thinking-blocks.ts).
    if (Array.isArray(fields.messages)) fields.messages = withThinkingShown(fields.messages as ChatMessage[]);
    const { statusCode, body } = await this.pool.request({
      method: 'PUT',
      path: `/internal/v1/responses/${encodeURIComponent(id)}`,
      headers: { authorization: this.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ v: 1, ...fields }),
    });
    await body.dump();
    if (statusCode !== 204) throw unavailable(`storing the response answered ${statusCode}`);
  }

  /** The stored response, or null when there is none for this project (absent, expired, another project's). */
  async get(id: string, projectId: string): Promise<StoredResponse | null> {
    const { statusCode, body } = await this.pool.request({ method: 'GET', path: this.pathOf(id, projectId), headers: { authorization: this.authorization } });
    if (statusCode === 404) {
      await body.dump();
      return null;
    }
    if (statusCode !== 200) {
      await body.dump();
      throw unavailable(`reading the response answered ${statusCode}`);
    }
    const found = (await body.json()) as StoredResponse;
    if (Array.isArray(found.messages)) restoreThinking(found.messages);
    return found;
  }

  /** The project's stored items of these ids (input or output items of its kept responses); an id not found is absent. */
  async items(ids: readonly string[], projectId: string): Promise<Record<string, unknown>> {
    const query = new URLSearchParams({ project_id: projectId });
    for (const id of ids) query.append('id', id);
    const { statusCode, body } = await this.pool.request({ method: 'GET', path: `/internal/v1/responses/items?${query}`, headers: { authorization: this.authorization } });
    if (statusCode !== 200) {
      await body.dump();
      throw unavailable(`reading stored items answered ${statusCode}`);
    }
    return ((await body.json()) as StoredItems).items;
  }

  /** Whether a response of this project was deleted. */
  async delete(id: string, projectId: string): Promise<boolean> {
    const { statusCode, body } = await this.pool.request({ method: 'DELETE', path: this.pathOf(id, projectId), headers: { authorization: this.authorization } });
    await body.dump();
    if (statusCode === 204) return true;
    if (statusCode === 404) return false;
    throw unavailable(`deleting the response answered ${statusCode}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private pathOf(id: string, projectId: string): string {
    return `/internal/v1/responses/${encodeURIComponent(id)}?project_id=${encodeURIComponent(projectId)}`;
  }
}

function unavailable(why: string): GatewayError {
  return Errors.responseStoreUnavailable(why);
}

import { Errors, GatewayError } from '@gateway/shared';
import type { RequestContext } from '../pipeline/context.js';
import { nativeRoute } from '../pipeline/steps/parse.js';
import { isObject } from '../protocols/openai-responses/checks.js';
import { openAiResponses } from '../protocols/openai-responses/openai-responses.js';

/** More references than this in one body are not looked up (the control plane's bound too). */
const MAX_REFERENCES = 1_000;

/**
 * responses item references (POST /v1/responses, before the body is parsed): an `item_reference`
 * input item names an item of an earlier response by its id — the Vercel AI SDK sends the
 * assistant messages and tool calls of a conversation this way while `store` is on. On a
 * translated route the gateway puts the item it kept in the reference's place, so the provider
 * is sent the conversation whole; an id the project's kept responses do not hold is a 400 naming
 * the item, as OpenAI answers. On a native route the references go to the provider as they came:
 * it keeps its own items. Without the control plane the parse refuses them, by name.
 */
export function resolveItemReferences(ctx: RequestContext): void | Promise<void> {
  const store = ctx.deps.responses ?? null;
  const body = ctx.json;
  if (store === null || !isObject(body) || !Array.isArray(body.input) || typeof body.model !== 'string') return;
  const input = body.input as unknown[];
  const ids = referencedIds(input);
  if (ids.length === 0) return;
  if (nativeRoute(ctx, openAiResponses)?.(body.model) === true) return;
  if (ids.length > MAX_REFERENCES) return ctx.fail(Errors.invalidField('input', `\`input\` refers to more than ${MAX_REFERENCES} items by item_reference.`), 'error');
  return store.items(ids, ctx.projectId).then(
    (items) => {
      for (let i = 0; i < input.length; i++) {
        const id = referenceId(input[i]);
        if (id === null) continue;
        const item = Object.hasOwn(items, id) ? items[id] : undefined;
        if (item === undefined || item === null) return ctx.fail(Errors.invalidField(`input[${i}]`, `Item with id '${id.slice(0, 256)}' not found.`), 'error');
        input[i] = item;
      }
    },
    (err: unknown) => ctx.fail(err instanceof GatewayError ? err : Errors.responseStoreUnavailable('no answer'), 'error'),
  );
}

function referencedIds(input: unknown[]): string[] {
  const ids = new Set<string>();
  for (const item of input) {
    const id = referenceId(item);
    if (id !== null) ids.add(id);
  }
  return [...ids];
}

/** The id an `item_reference` item names (a non-empty string up to 256 characters); null for any other item. */
function referenceId(item: unknown): string | null {
  if (!isObject(item) || item.type !== 'item_reference') return null;
  const id = item.id;
  return typeof id === 'string' && id !== '' && id.length <= 256 ? id : null;
}

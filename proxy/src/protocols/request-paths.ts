import { spliceModel } from '../request/model-splice.js';
import { anthropicMessages } from './anthropic-messages/anthropic-messages.js';
import { openAiResponses } from './openai-responses/openai-responses.js';
import type { InboundProtocol } from './protocol.js';
import { jsonBytes } from '../request/json-bytes.js';

/**
 * What a request body costs on its way to a provider, outside the server (the bench's
 * `translation` scenario measures it in-process): the body parsed, then either read for what the
 * gateway needs and sent as it came with the provider's model id written in place (a native
 * route), or translated into the internal request and serialised for an OpenAI-compatible
 * provider (a translated route). The same functions as the endpoints' chain, in its order.
 */
export type RequestPath = (raw: Buffer, upstreamModel: string) => Buffer;

function native(protocol: InboundProtocol): RequestPath {
  return (raw, upstreamModel) => {
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const parsed = protocol.parse(body, raw, () => true);
    return spliceModel(raw, parsed.model, upstreamModel) ?? jsonBytes({ ...body, model: upstreamModel });
  };
}

function internal(protocol: InboundProtocol, raw: Buffer, upstreamModel: string): Record<string, unknown> {
  const parsed = protocol.parse(JSON.parse(raw.toString('utf8')), raw);
  return Object.assign({}, parsed.chat, { model: upstreamModel });
}

function translated(protocol: InboundProtocol): RequestPath {
  return (raw, upstreamModel) => serialise(internal(protocol, raw, upstreamModel));
}

/** How the translated path sends the internal request: serialised, then encoded. */
function serialise(body: Record<string, unknown>): Buffer {
  return jsonBytes(body);
}

/**
 * The translated path without its last part: the internal request made and not serialised. Its
 * difference from the translated path is what serialising costs, the part no conversion avoids.
 */
function unserialised(protocol: InboundProtocol): (raw: Buffer, upstreamModel: string) => unknown {
  return (raw, upstreamModel) => internal(protocol, raw, upstreamModel);
}

export const REQUEST_PATHS = {
  messages: { native: native(anthropicMessages), translated: translated(anthropicMessages), unserialised: unserialised(anthropicMessages) },
  responses: { native: native(openAiResponses), translated: translated(openAiResponses), unserialised: unserialised(openAiResponses) },
} as const;

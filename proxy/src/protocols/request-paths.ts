import { spliceModel } from '../request/model-splice.js';
import { anthropicMessages } from './anthropic-messages/anthropic-messages.js';
import { openAiResponses } from './openai-responses/openai-responses.js';
import type { InboundProtocol } from './protocol.js';

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
    return spliceModel(raw, parsed.model, upstreamModel) ?? Buffer.from(JSON.stringify({ ...body, model: upstreamModel }));
  };
}

function translated(protocol: InboundProtocol): RequestPath {
  return (raw, upstreamModel) => {
    const parsed = protocol.parse(JSON.parse(raw.toString('utf8')), raw);
    return Buffer.from(JSON.stringify(Object.assign({}, parsed.chat, { model: upstreamModel })));
  };
}

export const REQUEST_PATHS = {
  messages: { native: native(anthropicMessages), translated: translated(anthropicMessages) },
  responses: { native: native(openAiResponses), translated: translated(openAiResponses) },
} as const;

import type { StreamMeta } from '../../providers/adapter.js';
import type { BedrockRequest, BedrockResponse } from '../../providers/bedrock/bedrock-wire.js';
import type { Conversion } from '../conversion.js';
import { toBedrockRequest, type ConverseSettings } from './bedrock-request.js';
import { toChatCompletion } from './bedrock-response.js';
import type { CompletionResult } from '../../request/internal-request.js';
import { BedrockStreamTranslator, type StreamContext } from './bedrock-stream.js';

/** The internal request ⇄ Bedrock's Converse API (`bedrock` entries; batch inference records too). */
export const chatConverse: Conversion<{
  request: Parameters<typeof toBedrockRequest>[0];
  requestSettings: ConverseSettings | undefined;
  converted: BedrockRequest;
  answer: BedrockResponse;
  answerSettings: { provider: string; id: string; model: string };
  rendered: CompletionResult;
  streamSettings: StreamContext & { meta: StreamMeta };
  translator: BedrockStreamTranslator;
}> = {
  client: 'chat',
  provider: 'converse',
  toRequest: (body, settings) => toBedrockRequest(body, settings),
  fromResponse: (response, { provider, id, model }) => {
    const { json, usage, finish } = toChatCompletion(response, provider, id, model);
    return { status: 200, body: Buffer.from(json), usage, finishReason: finish.gateway, rawFinishReason: finish.raw };
  },
  streamTranslator: ({ meta, ...ctx }) => new BedrockStreamTranslator(meta, ctx),
};

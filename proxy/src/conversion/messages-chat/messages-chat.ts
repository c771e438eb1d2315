import type { MessagesPurpose, MessagesRequest } from '../../protocols/anthropic-messages/parse-request.js';
import type { CompletionResult } from '../../request/internal-request.js';
import type { Conversion } from '../conversion.js';
import { MessageStreamWriter } from './message-stream-writer.js';
import { toChatRequest } from './messages-to-chat.js';
import { renderMessage } from './render-message.js';

/** An Anthropic Messages client ⇄ the internal request: `/v1/messages` on any route that is not native. */
export const messagesChat: Conversion<{
  request: unknown;
  requestSettings: { raw: Buffer; purpose: MessagesPurpose };
  converted: MessagesRequest;
  answer: CompletionResult;
  /** The model id the client asked for, which its message names. */
  answerSettings: { model: string };
  rendered: Buffer;
  /** `promptEstimate`: the input tokens message_start reports before the provider has counted them. */
  streamSettings: { model: string; promptEstimate: number };
  translator: MessageStreamWriter;
}> = {
  client: 'messages',
  provider: 'chat',
  toRequest: (body, { raw, purpose }) => toChatRequest(body, raw, purpose),
  fromResponse: (result, { model }) => renderMessage(result, model),
  streamTranslator: ({ model, promptEstimate }) => new MessageStreamWriter(model, promptEstimate),
};

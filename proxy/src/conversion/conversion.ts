/**
 * One protocol pair (after agentgateway's `conversion/*`): each folder here holds one, named
 * client side first, and exports one Conversion of this shape:
 *
 *   messages-chat    an Anthropic Messages client  ⇄ the internal request (OpenAI Chat Completions)
 *   responses-chat   an OpenAI Responses client     ⇄ the internal request
 *   chat-anthropic   the internal request ⇄ Anthropic's Messages API (anthropic, Claude on vertex)
 *   chat-gemini      the internal request ⇄ Gemini's generateContent (gemini, Gemini on vertex)
 *   chat-converse    the internal request ⇄ Bedrock's Converse API
 *
 * `toRequest` makes the provider side's request of the client side's; `fromResponse` makes the
 * client side's whole answer of the provider side's; `streamTranslator` makes what turns the
 * provider side's stream into the client side's. A provider folder keeps its transport (URLs,
 * credentials, errors, what it carries of each field); a pair keeps only the mapping. A client
 * of one protocol reaches a provider of another through two pairs, the internal request between.
 */
export interface PairTypes {
  request: unknown;
  requestSettings: unknown;
  converted: unknown;
  answer: unknown;
  answerSettings: unknown;
  rendered: unknown;
  streamSettings: unknown;
  translator: unknown;
}

export interface Conversion<T extends PairTypes> {
  /** The protocols of the two sides, as the folder names them. */
  readonly client: string;
  readonly provider: string;
  toRequest(request: T['request'], settings: T['requestSettings']): T['converted'];
  fromResponse(answer: T['answer'], settings: T['answerSettings']): T['rendered'];
  streamTranslator(settings: T['streamSettings']): T['translator'];
}

/** A provider's stream read into the internal request's chunks (OpenAI chunk JSON), the same for every provider-side pair. */
export interface ProviderStreamTranslator<Event> {
  /** Appends to `out` the chunks one event of the provider's stream stands for; throws the gateway's error for an error event. */
  push(event: Event, out: string[]): void;
  /** The provider's body ended: appends the last chunks, or throws when the stream was cut short. */
  end(out: string[]): void;
  /** The stream's last event was seen: nothing after it is read. */
  readonly finished: boolean;
}

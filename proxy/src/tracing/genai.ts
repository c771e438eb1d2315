import type { GatewayEndpoint } from '@gateway/shared';

/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (development status) and the
 * gateway's own, spelled once. Written out rather than imported from
 * @opentelemetry/semantic-conventions' incubating entry point, which is large and whose names may
 * move between minor releases.
 */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  projectId: 'gateway.project.id',
  keyId: 'gateway.key.id',
  requestId: 'gateway.request.id',
  endpoint: 'gateway.endpoint',
  outcome: 'gateway.outcome',
  attempts: 'gateway.attempts',
  /** The provider's name in the providers file (gen_ai.provider.name is its kind). */
  gatewayProvider: 'gateway.provider.name',
  attemptNumber: 'gateway.attempt.number',
  /** served, failover, failed or abandoned (otel-tracer.ts). */
  attemptOutcome: 'gateway.attempt.outcome',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  /** The MCP server (its name in the providers file) a tool call went to. */
  mcpServer: 'gateway.mcp.server',
  /** The client's end user (OpenAI `user`, Anthropic `metadata.user_id`), as its records carry it. */
  endUser: 'gateway.end_user',
} as const;

/** One attribute per cost-attribution tag: `gateway.tag.team` = `search`. */
export const TAG_ATTRIBUTE_PREFIX = 'gateway.tag.';

/** The event that carries prompts and completions when content capture is on. */
export const CONTENT_EVENT = 'gen_ai.client.inference.operation.details';

/** gen_ai.operation.name of each inbound API. */
export const OPERATION: Record<GatewayEndpoint, string> = {
  'chat.completions': 'chat',
  messages: 'chat',
  // No model runs: a custom operation name, as the convention allows.
  'messages.count_tokens': 'count_tokens',
  responses: 'chat',
  embeddings: 'embeddings',
  mcp: 'execute_tool',
};

/**
 * gen_ai.provider.name of each provider type: the convention's well-known value where there is
 * one, the type itself otherwise (a custom value, as the convention allows).
 */
const PROVIDER_NAMES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  azure: 'azure.ai.openai',
};

export function genAiProviderName(type: string): string {
  return PROVIDER_NAMES[type] ?? type;
}

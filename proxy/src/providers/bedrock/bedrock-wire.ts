/**
 * The parts of Amazon Bedrock's Converse API (`POST /model/{modelId}/converse`,
 * `/converse-stream`) the adapter writes and reads, named as the API reference names them.
 * Everything is optional on the way in: an answer is checked as it is read.
 */
export interface BedrockImageBlock {
  format: 'png' | 'jpeg' | 'gif' | 'webp';
  source: { bytes: string };
}

export interface BedrockDocumentBlock {
  format: 'pdf';
  name: string;
  source: { bytes: string };
}

export interface BedrockToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
}

export interface BedrockToolResult {
  toolUseId: string;
  content: ({ text: string } | { image: BedrockImageBlock })[];
  status?: 'success' | 'error';
}

/** A prompt-cache checkpoint: what comes before it (tools, then system, then messages) is cached. */
export interface BedrockCachePoint {
  cachePoint: { type: 'default'; ttl?: '5m' | '1h' };
}

/** A Claude model's extended thinking, sent back as it came (Bedrock checks the signature). */
export type BedrockReasoningBlock = { reasoningContent: { reasoningText: { text: string; signature: string } } | { redactedContent: string } };

export type BedrockContentBlock =
  | { text: string }
  | BedrockReasoningBlock
  | BedrockCachePoint
  | { image: BedrockImageBlock }
  | { document: BedrockDocumentBlock }
  | { toolUse: BedrockToolUse }
  | { toolResult: BedrockToolResult };

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockTool {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type BedrockToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface BedrockRequest {
  messages: BedrockMessage[];
  system?: ({ text: string } | BedrockCachePoint)[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: (BedrockTool | BedrockCachePoint)[]; toolChoice?: BedrockToolChoice };
  /** Fields of the model's own API: a Claude model's `thinking`. */
  additionalModelRequestFields?: Record<string, unknown>;
}

export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface BedrockResponse {
  output?: { message?: { role?: string; content?: Record<string, unknown>[] } };
  stopReason?: string;
  usage?: BedrockUsage;
  metrics?: { latencyMs?: number };
}

/**
 * Which field carries the output-token limit to an OpenAI-wire provider. OpenAI's reasoning models
 * (the o-series and the gpt-5 family) refuse `max_tokens` with a 400 and take only
 * `max_completion_tokens`; older models and most OpenAI-compatible servers take `max_tokens`. The
 * gateway itself writes `max_tokens` (a project's cap) and clients send either, so the adapter moves
 * the limit into the field the model takes, never sending both.
 *
 * A model is recognised by its upstream name: one of REASONING_FAMILIES, alone or followed by `-`
 * or `.` (`o4-mini`, `gpt-5.1`, `o3-2025-04-16`), after an optional fine-tune `ft:` prefix. A
 * provider whose names say nothing of the model (Azure deployments are named by their owner) sets
 * `options.max_tokens_field` instead, which then applies to every model of that provider.
 */
export type TokenLimitField = 'max_tokens' | 'max_completion_tokens';

export const REASONING_FAMILIES: readonly string[] = ['o1', 'o3', 'o4', 'gpt-5'];

const FIELDS: readonly TokenLimitField[] = ['max_tokens', 'max_completion_tokens'];

/** The `max_tokens_field` option, validated; null when not set (decided per model). */
export function tokenLimitOption(provider: string, options: Record<string, unknown>): TokenLimitField | null {
  const value = options.max_tokens_field;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !(FIELDS as readonly string[]).includes(value)) {
    throw new Error(`provider ${provider}: options.max_tokens_field must be one of ${FIELDS.join(', ')}`);
  }
  return value as TokenLimitField;
}

export function isReasoningModel(upstreamModel: string): boolean {
  const name = upstreamModel.startsWith('ft:') ? upstreamModel.slice(3) : upstreamModel;
  return REASONING_FAMILIES.some((family) => name === family || (name.startsWith(family) && (name[family.length] === '-' || name[family.length] === '.')));
}

/**
 * The field to send the limit in, or null to send the body's fields as they are (a model not
 * recognised, with no option set: the client's choice stands).
 */
export function tokenLimitField(upstreamModel: string, option: TokenLimitField | null): TokenLimitField | null {
  if (option !== null) return option;
  return isReasoningModel(upstreamModel) ? 'max_completion_tokens' : null;
}

/** Whether the body carries the limit in the other field, so that it must be moved. */
export function limitNeedsMove(body: Readonly<Record<string, unknown>>, field: TokenLimitField | null): boolean {
  if (field === null) return false;
  return body[field === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens'] !== undefined;
}

/**
 * Moves the limit into `field` on a copy the caller owns. When both were set, the value kept is
 * `max_completion_tokens`'s, the one the gateway checked against the project's cap.
 */
export function moveLimit(body: Record<string, unknown>, field: TokenLimitField): void {
  const value = body.max_completion_tokens ?? body.max_tokens;
  delete body.max_tokens;
  delete body.max_completion_tokens;
  if (value !== undefined && value !== null) body[field] = value;
}

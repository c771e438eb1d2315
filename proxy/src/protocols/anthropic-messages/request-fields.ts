import { Errors, GatewayError } from '@gateway/shared';

/**
 * The small vocabulary the Messages parser validates with. Paths are written the way Anthropic
 * writes them (`messages.0.content.1.type`): its error body has no `param`, so the path leads
 * the message, as in Anthropic's own "max_tokens: Field required".
 */
export function invalid(path: string, problem: string): GatewayError {
  return Errors.invalidField(path, problem);
}

/** A field the internal (OpenAI-shaped) request has no room for: refused rather than dropped. */
export function unsupported(path: string, why: string): GatewayError {
  return invalid(path, `not supported by this gateway: ${why}`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function requireString(value: unknown, path: string, options: { nonEmpty?: boolean; max?: number } = {}): string {
  if (typeof value !== 'string') throw invalid(path, value === undefined ? 'Field required' : 'must be a string');
  if (options.nonEmpty === true && value.length === 0) throw invalid(path, 'must not be empty');
  if (options.max !== undefined && value.length > options.max) throw invalid(path, `must be at most ${options.max} characters`);
  return value;
}

export function requireObject(value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) throw invalid(path, value === undefined ? 'Field required' : 'must be an object');
  return value;
}

export function optionalNumber(body: Record<string, unknown>, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (!present(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw invalid(field, `must be a number from ${min} to ${max}`);
  return value;
}

/** Levels of nesting allowed in free-form JSON (a schema, a tool's input). */
export const MAX_DEPTH = 64;

/**
 * Refuses free-form JSON nested deeper than MAX_DEPTH. It is serialised again on its way to the
 * provider and walked by the token estimate, both recursively: a body of a few megabytes can nest
 * deep enough to overflow the stack there.
 */
export function checkDepth(value: unknown, path: string, depth = 0): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_DEPTH) throw invalid(path, `is nested more than ${MAX_DEPTH} levels deep`);
  for (const inner of Array.isArray(value) ? value : Object.values(value)) checkDepth(inner, path, depth + 1);
}

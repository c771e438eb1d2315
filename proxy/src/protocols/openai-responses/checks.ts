import { Errors, GatewayError } from '@gateway/shared';

/** The small checks every part of a Responses request is validated with; the first problem names its field. */
export function invalid(param: string, message: string): GatewayError {
  return Errors.invalidField(clip(param), message);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Absent and null mean "not set", as in OpenAI's API. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function optionalString(body: Record<string, unknown>, field: string, at = field): string | null {
  const value = body[field];
  if (!isSet(value)) return null;
  if (typeof value !== 'string') throw invalid(at, `\`${at}\` must be a string.`);
  return value;
}

export function optionalBoolean(body: Record<string, unknown>, field: string, at = field): boolean | null {
  const value = body[field];
  if (!isSet(value)) return null;
  if (typeof value !== 'boolean') throw invalid(at, `\`${at}\` must be a boolean.`);
  return value;
}

export function optionalNumber(body: Record<string, unknown>, field: string, min: number, max: number): number | null {
  const value = body[field];
  if (!isSet(value)) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(field, `\`${field}\` must be a number from ${min} to ${max}.`);
  }
  return value;
}

export function optionalPositiveInt(body: Record<string, unknown>, field: string): number | null {
  const value = body[field];
  if (!isSet(value)) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw invalid(field, `\`${field}\` must be a positive integer.`);
  return value;
}

/** A client-chosen name (a field, a type) quoted in a message stays short. */
export function clip(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

import { Errors, type GatewayError } from '@gateway/shared';

/** What every pair's request conversion checks of the internal request's values as it writes them. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The 400 a value the provider's protocol cannot be written with gets, naming where it is. */
export function invalid(param: string, message: string): GatewayError {
  return Errors.invalidField(param, message);
}

/**
 * Payloads that cross Redis carry `v`. A reader accepts the versions it knows and refuses the rest
 * with a ContractError, so replicas of two releases can run side by side during a rolling deploy:
 * a new writer keeps reading what old proxies enqueue, and nobody misreads a newer shape.
 */
export class ContractError extends Error {
  constructor(readonly contract: string, message: string) {
    super(`${contract}: ${message}`);
    this.name = 'ContractError';
  }
}

export function expectObject(contract: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ContractError(contract, 'not an object');
  }
  return value as Record<string, unknown>;
}

export function expectVersion(contract: string, obj: Record<string, unknown>, known: readonly number[]): number {
  const v = obj.v;
  if (typeof v !== 'number' || !known.includes(v)) {
    throw new ContractError(contract, `unsupported version ${String(v)} (this build reads ${known.join(', ')})`);
  }
  return v;
}

export function expectString(contract: string, obj: Record<string, unknown>, field: string): string {
  const value = obj[field];
  if (typeof value !== 'string') throw new ContractError(contract, `${field} must be a string`);
  return value;
}

export function expectNullableString(contract: string, obj: Record<string, unknown>, field: string): string | null {
  const value = obj[field];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new ContractError(contract, `${field} must be a string or null`);
  return value;
}

export function expectNullableNumber(contract: string, obj: Record<string, unknown>, field: string): number | null {
  const value = obj[field];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ContractError(contract, `${field} must be a number or null`);
  return value;
}

/** A JSON payload as an object of one of the `known` versions, or a ContractError. */
export function parseVersioned(contract: string, raw: string, known: readonly number[]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ContractError(contract, 'not JSON');
  }
  const obj = expectObject(contract, parsed);
  expectVersion(contract, obj, known);
  return obj;
}

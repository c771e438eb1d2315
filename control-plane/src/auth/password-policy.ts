import { randomBytes } from 'node:crypto';
import { Errors } from '@gateway/shared';

/**
 * What a password must be, wherever one is set: account creation, both password routes, the
 * seeded admin's ADMIN_PASSWORD and the recovery command. Length is what resists guessing (the
 * sign-in throttle slows the guesses down); no composition rules, which push people toward
 * predictable patterns. The one obvious guess, the account's own email, is refused.
 */
export const MIN_PASSWORD_LENGTH = 12;
/** Only stops abuse: scrypt over a megabyte of "password" is work nobody should be able to ask for. */
export const MAX_PASSWORD_LENGTH = 1024;

export const PASSWORD_POLICY_TEXT = `at least ${MIN_PASSWORD_LENGTH} characters and not the account's email`;

/** Why the password is refused, or null when it is fine. Length counts characters, not bytes. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return "must not be the account's email";
  return null;
}

/** 400 INVALID_REQUEST naming the field, e.g. "body.new_password must be at least 12 characters". */
export function checkPassword(password: string, email: string, param: string): void {
  const problem = passwordProblem(password, email);
  if (problem !== null) throw Errors.badBodyField(param, problem);
}

/** 24 characters of base64url: 144 bits from the system's cryptographic source. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

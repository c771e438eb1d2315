import { describe, expect, it } from 'vitest';
import { GatewayError } from '@gateway/shared';
import { checkPassword, generatePassword, MIN_PASSWORD_LENGTH, passwordProblem } from './password-policy.js';

describe('password policy', () => {
  it('wants 12 characters or more, counted as characters rather than bytes', () => {
    expect(MIN_PASSWORD_LENGTH).toBe(12);
    expect(passwordProblem('elevenchars', 'a@example.test')).toMatch(/at least 12 characters/);
    expect(passwordProblem('twelve chars', 'a@example.test')).toBeNull();
    // Eleven characters, but 33 bytes of UTF-8: still too short.
    expect(passwordProblem('ää€€€€€€€€€', 'a@example.test')).toMatch(/at least 12/);
    expect(passwordProblem('x'.repeat(1025), 'a@example.test')).toMatch(/at most 1024/);
  });

  it("refuses the account's own email in any case", () => {
    expect(passwordProblem('Jo.Long@Example.test', 'jo.long@example.TEST')).toMatch(/email/);
    expect(passwordProblem(' jo.long@example.test ', 'jo.long@example.test')).toMatch(/email/);
    expect(passwordProblem('jo.long@example.test!', 'jo.long@example.test')).toBeNull();
  });

  it('names the field in a 400', () => {
    let err: unknown;
    try {
      checkPassword('short', 'a@example.test', 'new_password');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'INVALID_REQUEST', param: 'new_password', message: 'body.new_password must be at least 12 characters' });
  });

  it('generates passwords that meet it, different every time', () => {
    const a = generatePassword();
    expect(a).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(passwordProblem(a, 'a@example.test')).toBeNull();
    expect(generatePassword()).not.toBe(a);
  });
});

import { describe, expect, it } from 'vitest';
import { ApiError } from '../../dashboard/src/api/api-error.js';
import { PROJECT_ROLES } from '../../dashboard/src/api/types.js';
import { fieldErrorFrom, readableProblem, withoutField } from '../../dashboard/src/lib/field-errors.js';
import { LOWEST_ROLE_FOR, mayDo, type ProjectAction } from '../../dashboard/src/lib/project-permissions.js';
import { can, type ProjectAction as ServerAction } from '../../src/auth/permissions.js';

const refused = (message: string, param: string | null, code = 'INVALID_REQUEST', status = 400) => new ApiError(status, code, message, { param });

describe('API errors on form fields', () => {
  it('puts a refusal on the field its param names, in words a person reads', () => {
    const fields = { password: 'password', email: 'email' };
    expect(fieldErrorFrom(refused('body.password must NOT have fewer than 12 characters', 'password'), fields)).toEqual({
      field: 'password',
      message: 'Use at least 12 characters.',
    });
    expect(fieldErrorFrom(refused("body.password must not be the account's email", 'password'), fields)?.message).toBe('A password cannot be the account’s email address.');
    expect(fieldErrorFrom(refused('body.email must match format "email"', 'email'), fields)?.message).toBe('Enter an email address, like name@example.com.');
    expect(fieldErrorFrom(refused('An account with this email already exists.', 'email', 'CONFLICT', 409), fields)?.message).toBe('An account with this email already exists.');
  });

  it('maps the API field to the form field that shows it', () => {
    const found = fieldErrorFrom(refused('body.new_password must NOT have fewer than 12 characters', 'new_password'), { new_password: 'next' });
    expect(found).toEqual({ field: 'next', message: 'Use at least 12 characters.' });
  });

  it('leaves errors of no field of the form (and other errors) to a banner', () => {
    expect(fieldErrorFrom(refused('Wrong.', null), { email: 'email' })).toBeNull();
    expect(fieldErrorFrom(refused('body.role must be equal to one of the allowed values', 'role'), { email: 'email' })).toBeNull();
    expect(fieldErrorFrom(new Error('boom'), { email: 'email' })).toBeNull();
  });

  it('never shows a schema path, and always ends a sentence', () => {
    for (const message of ['body.name must NOT have fewer than 1 characters', 'body.email is required', 'body.name must be string', 'query.limit must be <= 1000', 'body.url: its host could not be resolved']) {
      const text = readableProblem(refused(message, 'x'));
      expect(text, message).not.toMatch(/body\.|query\./);
      expect(text, message).toMatch(/^[A-Z].*\.$/);
    }
    expect(readableProblem(refused('body.name must NOT have fewer than 1 characters', 'name'))).toBe('Fill this in.');
    expect(readableProblem(refused('body.url: its host could not be resolved', 'url'))).toBe('Its host could not be resolved.');
    expect(readableProblem(refused('No account has this email; …', 'email', 'NOT_FOUND', 404))).toContain('Accounts page');
  });

  it('clears one field and keeps the others', () => {
    const errors = { email: 'a', password: 'b' };
    expect(withoutField(errors, 'email')).toEqual({ password: 'b' });
    expect(withoutField(errors, 'role')).toBe(errors);
  });
});

describe('which controls a project role sees', () => {
  it('agrees with the server on every role and action', () => {
    for (const action of Object.keys(LOWEST_ROLE_FOR) as ProjectAction[]) {
      for (const role of PROJECT_ROLES) expect(mayDo(role, action), `${role} ${action}`).toBe(can(role, action as ServerAction));
      expect(mayDo(null, action)).toBe(false);
    }
  });

  it('shows the control while the role is not known, and lets the API decide', () => {
    expect(mayDo(undefined, 'project.delete')).toBe(true);
  });
});

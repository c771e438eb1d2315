import { ApiError } from '../api/api-error.js';

/**
 * The API names the field an error is about in `param` ("password", "email", "new_password") and
 * explains it for programmers ("body.password must NOT have fewer than 12 characters"). A form
 * wants the problem next to the field, in words a person reads; these turn one into the other.
 */
export type FieldErrors = Record<string, string>;

/** The form field an API error belongs to, and the sentence to show there; null when it names no field of the form. */
export function fieldErrorFrom(err: unknown, fields: Record<string, string>): { field: string; message: string } | null {
  if (!(err instanceof ApiError) || err.param === null) return null;
  const field = fields[err.param];
  if (field === undefined) return null;
  return { field, message: readableProblem(err) };
}

/** A sentence for a refused field value, from the API's code and message. */
export function readableProblem(err: ApiError): string {
  const text = err.message;
  let match: RegExpExecArray | null;
  if (/ is required$/.test(text) || /must NOT have fewer than 1 characters?$/.test(text)) return 'Fill this in.';
  if ((match = /must NOT have fewer than (\d+) characters$/.exec(text)) !== null) return `Use at least ${match[1]} characters.`;
  if ((match = /must NOT have more than (\d+) characters$/.exec(text)) !== null) return `Use at most ${match[1]} characters.`;
  if (/must not be the account's email$/.test(text)) return 'A password cannot be the account’s email address.';
  if (/must match format "email"$/.test(text)) return 'Enter an email address, like name@example.com.';
  if (/must match format "uuid"$/.test(text)) return 'A user id looks like 6f1c2a9e-…: 32 hex digits in five groups.';
  if (/must be equal to one of the allowed values$/.test(text)) return 'Pick one of the choices offered.';
  if (err.code === 'NOT_FOUND' && err.param === 'email') return 'No account has this email. An account admin can create one on the Accounts page.';
  // The API's own sentences ("An account with this email already exists.", "The current password
  // is wrong.") read well already; a schema message loses its "body.field" prefix.
  const stripped = text.replace(/^(body|query|params)(\.[\w.]+)?(:\s*|\s+)/, '');
  return stripped.charAt(0).toUpperCase() + stripped.slice(1) + (/[.!?]$/.test(stripped) ? '' : '.');
}

/** A copy of `errors` without `field`: what a form does when that field changes. */
export function withoutField(errors: FieldErrors, field: string): FieldErrors {
  if (!(field in errors)) return errors;
  const next = { ...errors };
  delete next[field];
  return next;
}

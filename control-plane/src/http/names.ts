import type { Ajv, SchemaValidateFunction } from 'ajv';

/**
 * Display names (projects, keys): one rule, applied by the validator wherever a schema uses
 * `nameSchema`. The name is trimmed in place, must keep 1–100 characters, and may hold no control
 * characters (C0, DEL, C1: newlines and NUL included, which PostgreSQL also refuses) and no line
 * separators or bidirectional marks, overrides and isolates, which make a name display as
 * something other than what it is ("txt.exe" shown as "exe.txt").
 */
export const NAME_KEYWORD = 'x-display-name';
export const MAX_NAME_LENGTH = 100;

const FORBIDDEN = /[\p{Cc}\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

export const nameSchema = {
  type: 'string',
  [NAME_KEYWORD]: true,
  description: `Trimmed; 1–${MAX_NAME_LENGTH} characters; no control characters, line separators or bidirectional controls.`,
} as const;

/** The reason a name is refused ("must …"), or null with the trimmed name. */
export function checkName(value: string): { name: string; problem: null } | { name: null; problem: string } {
  const name = value.trim();
  const length = [...name].length;
  if (length === 0) return { name: null, problem: 'must not be empty or only spaces' };
  if (length > MAX_NAME_LENGTH) return { name: null, problem: `must be at most ${MAX_NAME_LENGTH} characters` };
  const bad = FORBIDDEN.exec(name);
  if (bad !== null) {
    const point = `U+${(bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    return { name: null, problem: `must not contain control or bidirectional characters (found ${point})` };
  }
  return { name, problem: null };
}

/** Teaches an Ajv instance the keyword; the body validator modifies data in place (the trim). */
export function addNameKeyword(ajv: Ajv): void {
  const validate: SchemaValidateFunction = (_schema: boolean, data: string, _parentSchema, cxt): boolean => {
    const checked = checkName(data);
    if (checked.problem !== null) {
      validate.errors = [{ keyword: NAME_KEYWORD, message: checked.problem, params: {} }];
      return false;
    }
    if (cxt !== undefined) (cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = checked.name;
    return true;
  };
  ajv.addKeyword({ keyword: NAME_KEYWORD, type: 'string', schemaType: 'boolean', modifying: true, errors: true, validate });
}

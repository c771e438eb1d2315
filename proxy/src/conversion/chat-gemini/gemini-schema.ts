import { Errors, type GatewayError } from '@gateway/shared';

/**
 * JSON Schema (what OpenAI clients send for tool parameters and structured output) into the
 * Gemini API's `Schema`, a subset of OpenAPI 3.0 that refuses any field it does not know.
 *
 * - Kept: the keywords `Schema` has (format, title, description, nullable, enum, items,
 *   properties, required, min/maxItems, min/maxProperties, min/maxLength, pattern, minimum,
 *   maximum, anyOf, default, example, propertyOrdering).
 * - Converted: `type` to the API's upper-case names, a type list (`["string","null"]`) and a
 *   `null` member of anyOf/oneOf/enum to `nullable`, `oneOf` to `anyOf`, a string `const` to a
 *   one-value `enum`, local `$ref`s (into `$defs` / `definitions`) and one-member `allOf`s inlined,
 *   which is what Pydantic and zod emit for nested models.
 * - Dropped: annotations and validation keywords the model cannot be told about (`$schema`,
 *   `additionalProperties`, `exclusiveMinimum`, `multipleOf`, `examples`, `uniqueItems`, … and any
 *   other keyword); the model then sees a looser schema, never a wrong one.
 * - Refused (400 with the keyword's path in `param`): what would change the structure if dropped
 *   (`not`, `if`/`then`/`else`, `patternProperties`, `prefixItems`, `dependentSchemas`, an `allOf`
 *   of several schemas, a recursive or non-local `$ref`, tuple `items`), and non-string enums.
 */
const TYPES: Record<string, string> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
  null: 'NULL',
};

/** Copied as they are; type, nullable, anyOf/oneOf, enum, const, properties, items, $ref and allOf are
 * converted below, and every other keyword is dropped. */
const COPIED = new Set(['format', 'title', 'description', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'default', 'example', 'propertyOrdering', 'required']);
const REFUSED = new Set(['not', 'if', 'then', 'else', 'patternProperties', 'prefixItems', 'dependentSchemas']);

type Schema = Record<string, unknown>;

interface Context {
  defs: Record<string, unknown>;
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(param: string, message: string): GatewayError {
  return Errors.invalidField(param, `${message} (Gemini accepts a subset of JSON Schema).`);
}

/** `param` names the schema in the client's request, for the error a refusal carries. */
export function toGeminiSchema(schema: unknown, param: string): Schema {
  const defs: Record<string, unknown> = {};
  if (isObject(schema)) {
    if (isObject(schema.definitions)) Object.assign(defs, schema.definitions);
    if (isObject(schema.$defs)) Object.assign(defs, schema.$defs);
  }
  return convert(schema, param, { defs }, []);
}

function convert(node: unknown, at: string, ctx: Context, refs: readonly string[]): Schema {
  if (node === true) return {};
  if (!isObject(node)) throw refuse(at, `\`${at}\` must be a JSON schema object`);
  const { schema, chain } = expand(node, at, ctx, refs);

  const out: Schema = {};
  let nullable = schema.nullable === true;

  const type = schema.type;
  if (type !== undefined) {
    const listed = Array.isArray(type) ? type : [type];
    const named: string[] = [];
    for (const t of listed) {
      if (typeof t !== 'string' || TYPES[t] === undefined) throw refuse(`${at}.type`, `\`${at}.type\` has an unknown type ${JSON.stringify(t)}`);
      if (t === 'null' && listed.length > 1) nullable = true;
      else named.push(TYPES[t]);
    }
    if (named.length === 1) out.type = named[0];
    else if (named.length > 1) out.anyOf = named.map((t) => ({ type: t }));
  }

  if (schema.anyOf !== undefined && schema.oneOf !== undefined) throw refuse(`${at}.oneOf`, `\`${at}\` has both anyOf and oneOf`);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) {
    const key = schema.anyOf !== undefined ? 'anyOf' : 'oneOf';
    if (!Array.isArray(alternatives)) throw refuse(`${at}.${key}`, `\`${at}.${key}\` must be an array`);
    const members: Schema[] = [];
    alternatives.forEach((member, i) => {
      if (isObject(member) && member.type === 'null') nullable = true;
      else members.push(convert(member, `${at}.${key}[${i}]`, ctx, chain));
    });
    // Optional[X] (anyOf X | null) is X, nullable: the shape Pydantic gives every optional field.
    if (members.length === 1 && out.type === undefined && out.anyOf === undefined) Object.assign(out, members[0]);
    else if (members.length > 0) out.anyOf = members;
  }

  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum)) throw refuse(`${at}.enum`, `\`${at}.enum\` must be an array`);
    const values: string[] = [];
    for (const value of schema.enum) {
      if (value === null) nullable = true;
      else if (typeof value === 'string') values.push(value);
      else throw refuse(`${at}.enum`, `\`${at}.enum\` may only hold strings`);
    }
    out.enum = values;
  }
  if (schema.const !== undefined) {
    if (schema.const === null) nullable = true;
    else if (typeof schema.const === 'string') out.enum = [schema.const];
    else throw refuse(`${at}.const`, `\`${at}.const\` may only be a string`);
  }

  if (schema.properties !== undefined) {
    if (!isObject(schema.properties)) throw refuse(`${at}.properties`, `\`${at}.properties\` must be an object`);
    const properties: Schema = {};
    for (const [name, value] of Object.entries(schema.properties)) properties[name] = convert(value, `${at}.properties.${name}`, ctx, chain);
    out.properties = properties;
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) throw refuse(`${at}.items`, `\`${at}.items\` as a list (a tuple) cannot be expressed`);
    out.items = convert(schema.items, `${at}.items`, ctx, chain);
  }

  for (const [key, value] of Object.entries(schema)) {
    if (REFUSED.has(key)) throw refuse(`${at}.${key}`, `\`${at}.${key}\` cannot be expressed`);
    if (COPIED.has(key)) out[key] = value;
  }
  if (nullable) out.nullable = true;
  return out;
}

/**
 * Inlines `$ref`s into the root's `$defs`/`definitions` and one-member `allOf`s; the schema's own
 * keywords win over the referenced ones (a field's description beside its `$ref`). `refs` is the
 * chain of definitions being expanded, so that a recursive schema is refused, not looped on.
 */
function expand(node: Schema, at: string, ctx: Context, refs: readonly string[]): { schema: Schema; chain: readonly string[] } {
  let schema = node;
  let chain = refs;
  for (;;) {
    if (schema.$ref !== undefined) {
      const ref = schema.$ref;
      const match = typeof ref === 'string' ? /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref) : null;
      const name = match?.[1];
      if (name === undefined || !(name in ctx.defs)) throw refuse(`${at}.$ref`, `\`${at}.$ref\` must point into the schema's own $defs`);
      if (chain.includes(name)) throw refuse(`${at}.$ref`, `\`${at}.$ref\` makes the schema recursive, which cannot be expressed`);
      const target = ctx.defs[name];
      if (!isObject(target)) throw refuse(`${at}.$ref`, `\`${at}.$ref\` points to something that is not a schema`);
      const { $ref: _ref, ...rest } = schema;
      schema = { ...target, ...rest };
      chain = [...chain, name];
      continue;
    }
    if (schema.allOf !== undefined) {
      if (!Array.isArray(schema.allOf) || schema.allOf.length !== 1 || !isObject(schema.allOf[0])) {
        throw refuse(`${at}.allOf`, `\`${at}.allOf\` of several schemas cannot be expressed`);
      }
      const { allOf, ...rest } = schema;
      schema = { ...(allOf as Schema[])[0], ...rest };
      continue;
    }
    return { schema, chain };
  }
}

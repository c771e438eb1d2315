import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { addNameKeyword } from './names.js';

/**
 * JSON-schema validation of requests. Query strings and path parameters arrive as text, so their
 * validator coerces ("50" → 50); JSON bodies already carry types, so theirs does not: a body that
 * sends `"quota_tokens": "100"` or `"name": 42` is a client bug and gets a 400, not a guess.
 */
const COMMON: Options = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false };

function ajvWith(options: Options): Ajv {
  const ajv = new Ajv({ ...COMMON, ...options });
  // ajv-formats is CommonJS; under NodeNext its function is the module's `default`.
  addFormats.default(ajv);
  addNameKeyword(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = ajvWith({ coerceTypes: false });
  const coercing = ajvWith({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
}

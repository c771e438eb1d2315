import { isObject } from './mock-tokens.js';

/**
 * Tool-call arguments the mock invents from a function's JSON Schema: an object with every
 * required property (every property when none is marked required), each valued by its `const`,
 * `default`, first `enum` value or `examples` entry, else by type: a string naming the property
 * (`"example city"`, or a date, e-mail or URL for those formats), the minimum or 1 for numbers,
 * true, an array of one item (none when items are unknown), null. Always valid JSON.
 */
export function exampleArguments(parameters: unknown): string {
  const value = isObject(parameters) ? exampleValue(parameters, 'value', 0) : {};
  return JSON.stringify(isObject(value) ? value : {});
}

function exampleValue(schema: Record<string, unknown>, name: string, depth: number): unknown {
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && isObject(variants[0])) return exampleValue(variants[0], name, depth);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return exampleString(schema, name);
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1;
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return depth < 8 && isObject(schema.items) ? [exampleValue(schema.items, name, depth + 1)] : [];
    default:
      if (type === 'object' || isObject(schema.properties)) return exampleObject(schema, depth);
      return exampleString(schema, name);
  }
}

function exampleObject(schema: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  if (depth >= 8) return out;
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : Object.keys(properties);
  for (const key of required) {
    const property = properties[key];
    out[key] = isObject(property) ? exampleValue(property, key, depth + 1) : `example ${key}`;
  }
  return out;
}

function exampleString(schema: Record<string, unknown>, name: string): string {
  switch (schema.format) {
    case 'date':
      return '2024-01-01';
    case 'date-time':
      return '2024-01-01T00:00:00Z';
    case 'email':
      return 'someone@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    default:
      return `example ${name}`;
  }
}

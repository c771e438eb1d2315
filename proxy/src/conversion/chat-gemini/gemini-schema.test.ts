import { GatewayError } from '@gateway/shared';
import { describe, expect, it } from 'vitest';
import { toGeminiSchema } from './gemini-schema.js';

function refusedAt(schema: unknown): string | null {
  try {
    toGeminiSchema(schema, 'p');
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return (err as GatewayError).param;
  }
  throw new Error('expected a refusal');
}

describe('JSON Schema to Gemini Schema', () => {
  it('upper-cases types and keeps the keywords Gemini knows', () => {
    const schema = {
      type: 'object',
      title: 'T',
      description: 'D',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 10, pattern: '^a', format: 'email', enum: ['a', 'b'], default: 'a' },
        tags: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 }, minItems: 1, maxItems: 3 },
        ok: { type: 'boolean' },
      },
      required: ['name'],
      propertyOrdering: ['name', 'tags', 'ok'],
    };
    expect(toGeminiSchema(schema, 'p')).toEqual({
      type: 'OBJECT',
      title: 'T',
      description: 'D',
      properties: {
        name: { type: 'STRING', minLength: 1, maxLength: 10, pattern: '^a', format: 'email', enum: ['a', 'b'], default: 'a' },
        tags: { type: 'ARRAY', items: { type: 'INTEGER', minimum: 0, maximum: 9 }, minItems: 1, maxItems: 3 },
        ok: { type: 'BOOLEAN' },
      },
      required: ['name'],
      propertyOrdering: ['name', 'tags', 'ok'],
    });
  });

  it('drops keywords Gemini does not know, at every depth', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'x',
      type: 'object',
      additionalProperties: false,
      properties: { n: { type: 'number', exclusiveMinimum: 0, multipleOf: 2, examples: [2], 'x-extra': true }, list: { type: 'array', uniqueItems: true, items: { type: 'string', deprecated: true } } },
    };
    expect(toGeminiSchema(schema, 'p')).toEqual({ type: 'OBJECT', properties: { n: { type: 'NUMBER' }, list: { type: 'ARRAY', items: { type: 'STRING' } } } });
  });

  it('turns null into nullable: type lists, anyOf (Optional) and enums', () => {
    expect(toGeminiSchema({ type: ['string', 'null'] }, 'p')).toEqual({ type: 'STRING', nullable: true });
    expect(toGeminiSchema({ anyOf: [{ type: 'integer' }, { type: 'null' }], description: 'maybe', default: null }, 'p')).toEqual({ type: 'INTEGER', description: 'maybe', default: null, nullable: true });
    expect(toGeminiSchema({ type: 'string', enum: ['a', null] }, 'p')).toEqual({ type: 'STRING', enum: ['a'], nullable: true });
    expect(toGeminiSchema({ type: ['string', 'integer'] }, 'p')).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] });
    expect(toGeminiSchema({ oneOf: [{ type: 'string' }, { type: 'number' }] }, 'p')).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] });
    expect(toGeminiSchema({ const: 'fixed' }, 'p')).toEqual({ enum: ['fixed'] });
    expect(toGeminiSchema({ type: 'null' }, 'p')).toEqual({ type: 'NULL' });
  });

  it('inlines local $refs and single allOfs, as Pydantic writes nested models, sibling keywords winning', () => {
    const schema = {
      type: 'object',
      properties: {
        home: { $ref: '#/$defs/Address', description: 'Where they live' },
        work: { allOf: [{ $ref: '#/definitions/Address' }], description: 'Where they work' },
        past: { type: 'array', items: { $ref: '#/$defs/Address' } },
      },
      $defs: { Address: { type: 'object', description: 'An address', properties: { city: { type: 'string' } } } },
      definitions: { Address: { type: 'object', description: 'An address', properties: { city: { type: 'string' } } } },
    };
    const address = { type: 'OBJECT', properties: { city: { type: 'STRING' } } };
    expect(toGeminiSchema(schema, 'p')).toEqual({
      type: 'OBJECT',
      properties: {
        home: { ...address, description: 'Where they live' },
        work: { ...address, description: 'Where they work' },
        past: { type: 'ARRAY', items: { ...address, description: 'An address' } },
      },
    });
  });

  it('refuses what cannot be expressed, naming the keyword', () => {
    expect(refusedAt({ type: 'object', properties: { a: { not: {} } } })).toBe('p.properties.a.not');
    expect(refusedAt({ if: {}, then: {} })).toBe('p.if');
    expect(refusedAt({ type: 'array', prefixItems: [{ type: 'string' }] })).toBe('p.prefixItems');
    expect(refusedAt({ type: 'array', items: [{ type: 'string' }] })).toBe('p.items');
    expect(refusedAt({ allOf: [{ type: 'object' }, { required: ['a'] }] })).toBe('p.allOf');
    expect(refusedAt({ $ref: 'https://example.com/schema.json' })).toBe('p.$ref');
    expect(refusedAt({ $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' })).toBe('p.properties.next.$ref');
    expect(refusedAt({ type: 'integer', enum: [1, 2] })).toBe('p.enum');
    expect(refusedAt({ const: 3 })).toBe('p.const');
    expect(refusedAt({ type: 'date' })).toBe('p.type');
    expect(refusedAt({ type: 'object', properties: { a: false } })).toBe('p.properties.a');
  });
});

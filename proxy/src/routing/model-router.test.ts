import { describe, expect, it } from 'vitest';
import { parseProvidersFile } from '@gateway/shared';
import { PROVIDER_TYPES } from '../providers/registry.js';
import { ModelRouter, upstreamOf } from './model-router.js';

const router = (routes = '') =>
  new ModelRouter(
    parseProvidersFile(
      `providers:
  - { name: a, type: mock, models: [m, { id: only-a, upstream: inner }] }
  - { name: b, type: mock, models: [m] }
  - { name: c, type: mock, models: [m] }
${routes}`,
      'p.yaml',
      {},
      PROVIDER_TYPES,
    ),
  );

const names = (targets: readonly { adapter: { name: string } }[]) => targets.map((t) => t.adapter.name);

describe('ModelRouter', () => {
  it('serves ids by a wildcard entry, the longest prefix first, an exact id before any', () => {
    const r = new ModelRouter(
      parseProvidersFile(
        `providers:
  - { name: anthropic, type: mock, models: ["claude-*", claude-pinned] }
  - { name: bedrock, type: mock, models: [{ id: "claude-opus-*", upstream: "us.anthropic.claude-opus-*" }] }
`,
        'p.yaml',
        {},
        PROVIDER_TYPES,
      ),
    );
    const served = (model: string) => {
      const target = r.route(model).plan(0)[0]!;
      return [target.adapter.name, upstreamOf(target.entry, model)];
    };
    expect(served('claude-sonnet-5')).toEqual(['anthropic', 'claude-sonnet-5']);
    expect(served('claude-opus-5-5')).toEqual(['bedrock', 'us.anthropic.claude-opus-5-5']);
    expect(served('claude-pinned')).toEqual(['anthropic', 'claude-pinned']);
    expect(() => r.route('claude-')).toThrow(/not served/);
    expect(() => r.route('gpt-5')).toThrow(/not served/);
    // A pattern is no model to pick from the list.
    expect(JSON.parse(r.modelsList).data.map((m: { id: string }) => m.id)).toEqual(['claude-pinned']);
  });

  it('refuses a * anywhere but at the end of an id, and an upstream pattern for a plain id', () => {
    const parse = (models: string) => () => parseProvidersFile(`providers:\n  - { name: a, type: mock, models: ${models} }\n`, 'p.yaml', {}, PROVIDER_TYPES);
    expect(parse('["cl*ude"]')).toThrow(/may only end a model id/);
    expect(parse('[{ id: "claude-*", upstream: "x" }]')).toThrow(/must end in "\*" too/);
    expect(parse('[{ id: claude, upstream: "x-*" }]')).toThrow(/only for an id that does/);
  });

  it('makes a fallback chain in file order, and maps the upstream name', () => {
    const r = router();
    expect(names(r.route('m').plan(0))).toEqual(['a', 'b', 'c']);
    expect(r.route('only-a').plan(0)[0]?.entry.upstream).toBe('inner');
    expect(() => r.route('nope')).toThrow(/not served/);
  });

  it('limits the attempts a route makes', () => {
    const r = router('routes:\n  m: { attempts: 2 }');
    expect(names(r.route('m').plan(0))).toEqual(['a', 'b']);
  });

  it('draws the first target by weight and keeps the others as fallbacks by weight', () => {
    const r = router('routes:\n  m: { strategy: weighted, weights: { a: 1, b: 3, c: 0 } }');
    expect(names(r.route('m').plan(0, () => 0.1))).toEqual(['a', 'b', 'c']);
    expect(names(r.route('m').plan(0, () => 0.5))).toEqual(['b', 'a', 'c']);
    expect(names(r.route('m').plan(0, () => 0.999))).toEqual(['b', 'a', 'c']);
  });

  it('tries providers in a cooldown last', () => {
    const r = router();
    const health = r.health.get('a')!;
    for (let i = 0; i < 3; i++) health.failed(0);
    expect(names(r.route('m').plan(1))).toEqual(['b', 'c', 'a']);
  });
});

describe('ModelRouter: embeddings', () => {
  const mixed = () =>
    new ModelRouter(
      parseProvidersFile(
        `providers:
  - { name: claude, type: anthropic, api_key: sk-test-0123456789, models: [m, chat-only] }
  - { name: a, type: mock, models: [m] }
  - { name: b, type: mock, models: [m] }
routes:
  m: { strategy: weighted, weights: { claude: 5, a: 0, b: 1 } }
`,
        'p.yaml',
        {},
        PROVIDER_TYPES,
      ),
    );

  it('routes an embeddings request only to the providers that have embeddings, keeping weights', () => {
    const r = mixed();
    expect(names(r.route('m').plan(0, () => 0.1))).toEqual(['claude', 'b', 'a']);
    expect(names(r.embeddingsRoute('m').plan(0, () => 0.1))).toEqual(['b', 'a']);
  });

  it('refuses a model served only by providers without embeddings, and an unknown model as for chat', () => {
    const r = mixed();
    expect(() => r.embeddingsRoute('chat-only')).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', param: 'model', message: 'The model `chat-only` is served by a provider that has no embeddings.' }));
    expect(() => r.embeddingsRoute('nope')).toThrow(expect.objectContaining({ code: 'MODEL_NOT_FOUND' }));
  });

  it('uses the chat route itself when every provider has embeddings', () => {
    const r = router();
    expect(r.embeddingsRoute('m')).toBe(r.route('m'));
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { batchPrice, defaultProviders, loadProvidersConfig, parseProvidersFile } from './providers-file.js';

const TYPES = [
  { type: 'openai', defaultBaseUrl: null, usesBaseUrl: true },
  { type: 'mock', defaultBaseUrl: null, usesBaseUrl: false },
];
const parse = (text: string, env: Record<string, string> = {}) => parseProvidersFile(text, 'providers.yaml', env, TYPES);

describe('providers file', () => {
  it('accepts the minimum form from DESIGN §2 and expands ${VAR}', () => {
    const cfg = parse(
      `providers:
  - name: local
    type: openai
    base_url: http://127.0.0.1:9100/v1/
    api_key: \${OPENAI_API_KEY}
    models: [gpt-4o-mini, my-model]
`,
      { OPENAI_API_KEY: 'sk-test' },
    );
    expect(cfg.providers).toHaveLength(1);
    expect(cfg.providers[0]).toMatchObject({
      name: 'local',
      type: 'openai',
      base_url: 'http://127.0.0.1:9100/v1',
      api_key: 'sk-test',
      models: [
        { id: 'gpt-4o-mini', upstream: 'gpt-4o-mini', price: null },
        { id: 'my-model', upstream: 'my-model', price: null },
      ],
      timeout_ms: 60_000,
    });
    expect(cfg.routes).toEqual({});
    expect(cfg.cooldown).toEqual({ failures: 3, base_ms: 30_000, max_ms: 300_000 });
  });

  it('reads model entries with upstream names and prices, shared ids, routes and cooldown', () => {
    const cfg = parse(`providers:
  - name: east
    type: openai
    base_url: http://east/v1
    models:
      - gpt-4o-mini
      - { id: fast, upstream: gpt-4o-mini, price: { input: 0.15, output: 0.6, cached_input: 0.075 } }
  - name: west
    type: openai
    base_url: http://west/v1
    models: [{ id: fast, upstream: gpt-4o-mini-2024, price: { input: 0.2, output: 0.8 } }]
routes:
  fast: { strategy: weighted, weights: { east: 3, west: 1 }, attempts: 2 }
cooldown: { failures: 5, base_ms: 1000, max_ms: 8000 }
`);
    expect(cfg.providers[0]?.models[1]).toEqual({ id: 'fast', upstream: 'gpt-4o-mini', price: { input: 0.15, output: 0.6, cached_input: 0.075, cache_write: 0.15 } });
    // cached_input and cache_write default to the input price.
    expect(cfg.providers[1]?.models[0]?.price).toEqual({ input: 0.2, output: 0.8, cached_input: 0.2, cache_write: 0.2 });
    expect(cfg.routes.fast).toEqual({ strategy: 'weighted', weights: { east: 3, west: 1 }, attempts: 2 });
    expect(cfg.cooldown).toEqual({ failures: 5, base_ms: 1000, max_ms: 8000 });
  });

  it('reads a model\'s max_output_tokens beside its price (absent: left out, the default 16384 applies)', () => {
    const cfg = parse(`providers:
  - name: east
    type: openai
    base_url: http://east/v1
    models: [{ id: big, price: { input: 1, output: 2 }, max_output_tokens: 64000 }, small]
`);
    expect(cfg.providers[0]?.models[0]?.max_output_tokens).toBe(64000);
    expect(cfg.providers[0]?.models[1]?.max_output_tokens).toBeUndefined();
    expect(() => parse('providers:\n  - {name: e, type: openai, base_url: http://e/v1, models: [{ id: x, max_output_tokens: 0 }]}\n')).toThrow(/max_output_tokens/);
  });

  it("gives a provider type's default base_url and requires one where it has none", () => {
    const types = [...TYPES, { type: 'hosted', defaultBaseUrl: 'https://api.example.com', usesBaseUrl: true }];
    const cfg = parseProvidersFile('providers:\n  - {name: h, type: hosted, models: [a]}\n', 'p.yaml', {}, types);
    expect(cfg.providers[0]?.base_url).toBe('https://api.example.com');
  });

  it('accepts JSON, which is YAML too', () => {
    const cfg = parse('{"providers":[{"name":"m","type":"mock","models":["a"]}]}');
    expect(cfg.providers[0]?.base_url).toBeNull();
  });

  const cases: [string, string, RegExp][] = [
    ['not YAML', 'providers: [\n  - name: x\n  bad', /not valid YAML at line/],
    ['no providers list', 'models: []', /top-level "providers:" list/],
    ['empty list', 'providers: []', /"providers" is empty/],
    ['bad name', 'providers:\n  - name: "has space"\n    type: mock\n    models: [a]', /providers\[0\]: "name"/],
    ['unknown type', 'providers:\n  - name: p1\n    type: bedrock\n    models: [a]', /providers\[0\] \(p1\): "type" must be one of openai, mock, got "bedrock"/],
    ['missing base_url', 'providers:\n  - name: p1\n    type: openai\n    models: [a]', /\(p1\): "base_url" is required for type openai/],
    ['bad base_url', 'providers:\n  - name: p1\n    type: openai\n    base_url: ftp://x\n    models: [a]', /\(p1\): "base_url" must be http or https/],
    ['no models', 'providers:\n  - name: p1\n    type: mock\n    models: []', /\(p1\): "models" must be a non-empty list/],
    ['model twice', 'providers:\n  - name: p1\n    type: mock\n    models: [a, a]', /\(p1\): model "a" is listed twice/],
    ['bad timeout', 'providers:\n  - name: p1\n    type: mock\n    models: [a]\n    timeout_ms: -1', /\(p1\): "timeout_ms" must be a positive integer/],
    ['bad max_queued', 'providers:\n  - name: p1\n    type: mock\n    models: [a]\n    max_queued: -1', /\(p1\): "max_queued" must be a whole number, 0 or more/],
    ['unset variable', 'providers:\n  - name: p1\n    type: openai\n    base_url: http://x\n    api_key: ${NOPE}\n    models: [a]', /\(p1\): "api_key" refers to \$\{NOPE\}, which is not set/],
    ['duplicate provider', 'providers:\n  - {name: p1, type: mock, models: [a]}\n  - {name: p1, type: mock, models: [b]}', /provider name "p1" is used twice/],
    ['a model entry without id', 'providers:\n  - {name: p1, type: mock, models: [{upstream: x}]}', /\(p1\): models\[0\]: "id" must be a non-empty string/],
    ['a negative price', 'providers:\n  - {name: p1, type: mock, models: [{id: a, price: {input: -1, output: 1}}]}', /\(p1\): models\[0\] \(a\): "price".input must be a number of US dollars/],
    ['an unknown model field', 'providers:\n  - {name: p1, type: mock, models: [{id: a, cost: 1}]}', /models\[0\]: unknown field "cost"/],
    ['a route for a model nobody serves', 'providers:\n  - {name: p1, type: mock, models: [a]}\nroutes:\n  b: {strategy: fallback}', /routes.b: no provider lists the model "b"/],
    ['a route weighting a provider that does not serve the id', 'providers:\n  - {name: p1, type: mock, models: [a]}\n  - {name: p2, type: mock, models: [b]}\nroutes:\n  a: {strategy: weighted, weights: {p1: 1, p2: 1}}', /routes.a: "weights" names "p2", which does not serve "a"/],
    ['weights on a fallback route', 'providers:\n  - {name: p1, type: mock, models: [a]}\nroutes:\n  a: {weights: {p1: 1}}', /routes.a: "weights" applies to a weighted route only/],
    ['a weighted route without weights', 'providers:\n  - {name: p1, type: mock, models: [a]}\nroutes:\n  a: {strategy: weighted}', /routes.a: "weights" \(provider name → number\) is required/],
    ['an unknown strategy', 'providers:\n  - {name: p1, type: mock, models: [a]}\nroutes:\n  a: {strategy: random}', /routes.a: "strategy" must be fallback or weighted/],
    ['a bad cooldown', 'providers:\n  - {name: p1, type: mock, models: [a]}\ncooldown: {base_ms: 5000, max_ms: 1000}', /cooldown: "max_ms" must be at least "base_ms"/],
  ];
  for (const [what, text, message] of cases) {
    it(`names the provider and field when ${what}`, () => {
      expect(() => parse(text)).toThrow(ConfigError);
      expect(() => parse(text)).toThrow(message);
    });
  }

  it('never puts a secret from the environment into an error', () => {
    try {
      parse('providers:\n  - name: p1\n    type: openai\n    base_url: ${URL}\n    api_key: ${KEY}\n    models: 3', { URL: 'http://x', KEY: 'sk-secret-value' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('sk-secret-value');
    }
  });

  it('reads GATEWAY_CONFIG from disk and names an unreadable path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
    const file = join(dir, 'providers.yaml');
    writeFileSync(file, 'providers:\n  - {name: m, type: mock, models: [x]}\n');
    expect(loadProvidersConfig({ GATEWAY_CONFIG: file }, TYPES).providers[0]?.models).toEqual([{ id: 'x', upstream: 'x', price: null }]);
    expect(() => loadProvidersConfig({ GATEWAY_CONFIG: join(dir, 'missing.yaml') }, TYPES)).toThrow(/cannot read .*missing.yaml \(ENOENT\)/);
  });

  it('defaults to the offline mock, adding OpenAI only when its key is present', () => {
    expect(defaultProviders({}).providers.map((p) => p.name)).toEqual(['mock']);
    expect(defaultProviders({ OPENAI_API_KEY: 'sk-x' }).providers.map((p) => p.name)).toEqual(['mock', 'openai']);
    const all = defaultProviders({ OPENAI_API_KEY: 'sk-x', ANTHROPIC_API_KEY: 'sk-ant-x', GEMINI_API_KEY: 'AIza-x' });
    expect(all.providers.map((p) => [p.name, p.type])).toEqual([['mock', 'mock'], ['openai', 'openai'], ['anthropic', 'anthropic'], ['gemini', 'gemini']]);
    expect(all.providers[2]?.api_key).toBe('sk-ant-x');
    // OpenAI and Anthropic run the batches sent to them themselves, at their batch price.
    expect(all.providers.map((p) => p.settings?.batch ?? null)).toEqual([null, 'native', 'native', null]);
  });

  it("reads a model's batch price, and prices a provider-run batch line at half the price without one", () => {
    const cfg = parse('providers:\n  - {name: p, type: mock, models: [{id: a, price: {input: 2, output: 8, cached_input: 1, batch: {input: 1.5, output: 5}}}, {id: b, price: {input: 2, output: 8, cached_input: 1}}]}\n');
    const [a, b] = cfg.providers[0]!.models;
    expect(a?.price?.batch).toEqual({ input: 1.5, output: 5 });
    expect(batchPrice(a!.price!)).toEqual({ input: 1.5, output: 5, cached_input: 0.75, cache_write: 1.5 });
    expect(b?.price?.batch).toBeUndefined();
    expect(batchPrice(b!.price!)).toEqual({ input: 1, output: 4, cached_input: 0.5, cache_write: 1 });
    expect(() => parse('providers:\n  - {name: p, type: mock, models: [{id: a, price: {input: 1, output: 1, batch: {input: 1}}}]}\n')).toThrow(/"price".batch.output must be a number/);
    expect(() => parse('providers:\n  - {name: p, type: mock, models: [{id: a, price: {input: 1, output: 1, batch: {input: 1, output: 1, cached: 1}}}]}\n')).toThrow(/batch: unknown field "cached"/);
  });

  describe('type fields and presets', () => {
    const types = [
      ...TYPES.map((t) => (t.type === 'openai' ? { ...t, presets: { groq: { base_url: 'https://api.groq.com/openai/v1', options: { max_tokens_field: 'max_completion_tokens' } } } } : t)),
      {
        type: 'cloud',
        defaultBaseUrl: null,
        usesBaseUrl: true,
        fields: { region: 'required', secret_key: 'required', session: 'optional' } as const,
        defaultBaseUrlFor: (s: Readonly<Record<string, string>>) => `https://runtime.${s.region}.example.com/`,
      },
    ];
    const cloud = (extra = '') => `providers:\n  - name: c\n    type: cloud\n    region: eu-west-3\n    secret_key: \${SECRET}\n    models: [m]\n${extra}`;

    it("reads a type's own fields, expanding ${VAR}, and derives its base_url from them", () => {
      const p = parseProvidersFile(cloud(), 'p.yaml', { SECRET: 's3cr3t' }, types).providers[0];
      expect(p?.settings).toEqual({ region: 'eu-west-3', secret_key: 's3cr3t' });
      expect(p?.base_url).toBe('https://runtime.eu-west-3.example.com');
      const given = parseProvidersFile(cloud('    base_url: http://127.0.0.1:9/\n'), 'p.yaml', { SECRET: 's' }, types).providers[0];
      expect(given?.base_url).toBe('http://127.0.0.1:9');
    });

    it('refuses a missing required field, and a field of another type, naming them', () => {
      expect(() => parseProvidersFile('providers:\n  - {name: c, type: cloud, region: x, models: [m]}\n', 'p.yaml', {}, types)).toThrow(/"secret_key" is required for type cloud/);
      expect(() => parseProvidersFile('providers:\n  - {name: o, type: openai, base_url: http://x, region: x, models: [m]}\n', 'p.yaml', {}, types)).toThrow(/"region" applies to type cloud, not openai/);
      expect(() => parseProvidersFile(cloud(), 'p.yaml', {}, types)).toThrow(/refers to \$\{SECRET\}, which is not set/);
    });

    it('fills base_url and options from a preset, the entry winning', () => {
      const p = parseProvidersFile('providers:\n  - {name: g, type: openai, preset: groq, models: [m]}\n', 'p.yaml', {}, types).providers[0];
      expect(p).toMatchObject({ base_url: 'https://api.groq.com/openai/v1', options: { max_tokens_field: 'max_completion_tokens' }, preset: 'groq' });
      const own = parseProvidersFile('providers:\n  - {name: g, type: openai, preset: groq, base_url: http://proxy/v1, options: {max_tokens_field: max_tokens}, models: [m]}\n', 'p.yaml', {}, types).providers[0];
      expect(own).toMatchObject({ base_url: 'http://proxy/v1', options: { max_tokens_field: 'max_tokens' } });
      expect(() => parseProvidersFile('providers:\n  - {name: g, type: openai, preset: grok, models: [m]}\n', 'p.yaml', {}, types)).toThrow(/"preset" must be one of groq, got "grok"/);
      expect(() => parseProvidersFile('providers:\n  - {name: g, type: mock, preset: groq, models: [m]}\n', 'p.yaml', {}, types)).toThrow(/type mock has no presets/);
    });
  });
});

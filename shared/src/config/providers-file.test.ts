import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { defaultProviders, loadProvidersConfig, parseProvidersFile } from './providers-file.js';

const TYPES = ['openai', 'mock'];
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
      models: ['gpt-4o-mini', 'my-model'],
      timeout_ms: 60_000,
    });
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
    ['model on two providers', 'providers:\n  - {name: p1, type: mock, models: [a]}\n  - {name: p2, type: mock, models: [a]}', /model "a" is listed by both "p1" and "p2"/],
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
    expect(loadProvidersConfig({ GATEWAY_CONFIG: file }, TYPES).providers[0]?.models).toEqual(['x']);
    expect(() => loadProvidersConfig({ GATEWAY_CONFIG: join(dir, 'missing.yaml') }, TYPES)).toThrow(/cannot read .*missing.yaml \(ENOENT\)/);
  });

  it('defaults to the offline mock, adding OpenAI only when its key is present', () => {
    expect(defaultProviders({}).providers.map((p) => p.name)).toEqual(['mock']);
    expect(defaultProviders({ OPENAI_API_KEY: 'sk-x' }).providers.map((p) => p.name)).toEqual(['mock', 'openai']);
  });
});

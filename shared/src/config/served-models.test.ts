import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadServedModels, parseServedModels } from './served-models.js';

describe('served models', () => {
  it('lists each model id once with the providers serving it, in file order, without expanding credentials', () => {
    const models = parseServedModels(
      `providers:
  - name: east
    type: azure
    api_key: \${NOT_SET_HERE}
    models: [{ id: fast, upstream: gpt-4o-mini }, smart]
  - name: west
    type: azure
    models: [fast]
`,
      'providers.yaml',
    );
    expect(models).toEqual([
      { id: 'fast', providers: ['east', 'west'] },
      { id: 'smart', providers: ['east'] },
    ]);
  });

  it('reads GATEWAY_CONFIG, and the built-in default without it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'served-models-'));
    const file = join(dir, 'providers.yaml');
    writeFileSync(file, 'providers:\n  - { name: local, type: mock, models: [a, b] }\n');
    expect(loadServedModels({ GATEWAY_CONFIG: file }).map((m) => m.id)).toEqual(['a', 'b']);
    expect(loadServedModels({})).toEqual([
      { id: 'mock-1', providers: ['mock'] },
      { id: 'mock-1-mini', providers: ['mock'] },
    ]);
    expect(loadServedModels({ OPENAI_API_KEY: 'sk-x' }).map((m) => m.id)).toContain('gpt-4o-mini');
  });

  it('refuses a file it cannot use, naming it', () => {
    expect(() => loadServedModels({ GATEWAY_CONFIG: '/nonexistent/providers.yaml' })).toThrow(/GATEWAY_CONFIG: cannot read \/nonexistent\/providers.yaml \(ENOENT\)/);
    expect(() => parseServedModels('providers: nope', 'p.yaml')).toThrow(ConfigError);
    expect(() => parseServedModels('providers:\n  - { name: x, models: [{ upstream: y }] }\n', 'p.yaml')).toThrow(/providers\[0\] \(x\) has a model without an id/);
  });
});

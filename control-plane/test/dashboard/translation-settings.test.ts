import { describe, expect, it } from 'vitest';
import type { Project } from '../../dashboard/src/api/types.js';
import { aliasesText, parseAliasesText } from '../../dashboard/src/lib/model-aliases-text.js';
import { fieldOfParam, formFromProject, settingsPatch } from '../../dashboard/src/lib/project-settings.js';

const project: Project = {
  id: 'p1',
  name: 'demo',
  quota_tokens: null,
  quota_period: 'total',
  used_tokens: 0,
  created_at: '2026-11-26T00:00:00Z',
  rate_limits: { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null },
  allowed_models: null,
  max_tokens_cap: null,
  mcp: null,
  model_aliases: { 'claude-sonnet-4-5': 'claude-haiku-4-5' },
  unsupported_params: 'drop',
  responses: { ttl_days: 30 },
  cache: { mode: 'off', ttl_seconds: 3600 },
};

describe('model aliases, unsupported parameters and stored responses in the project settings form', () => {
  it('shows the settings as they are and sends nothing when unchanged', () => {
    const form = formFromProject(project);
    expect(form).toMatchObject({ aliases: 'claude-sonnet-4-5 = claude-haiku-4-5', unsupportedParams: 'drop', responsesTtl: '30' });
    expect(settingsPatch(project, form)).toEqual({ ok: true, value: { patch: {}, clearsQuota: false } });
    // The same aliases in another order or spacing are no change.
    expect(settingsPatch(project, { ...form, aliases: '\n  claude-sonnet-4-5=claude-haiku-4-5  \n' })).toEqual({ ok: true, value: { patch: {}, clearsQuota: false } });
  });

  it('sends what changed: the aliases whole (empty is none), the mode, the days', () => {
    const form = formFromProject(project);
    expect(settingsPatch(project, { ...form, aliases: 'claude-sonnet-4-5 = claude-haiku-4-5\ngpt-5 = gpt-5-mini' })).toMatchObject({
      ok: true,
      value: { patch: { model_aliases: { 'claude-sonnet-4-5': 'claude-haiku-4-5', 'gpt-5': 'gpt-5-mini' } } },
    });
    expect(settingsPatch(project, { ...form, aliases: '' })).toMatchObject({ ok: true, value: { patch: { model_aliases: null } } });
    expect(settingsPatch(project, { ...form, unsupportedParams: 'refuse' })).toMatchObject({ ok: true, value: { patch: { unsupported_params: 'refuse' } } });
    expect(settingsPatch(project, { ...form, responsesTtl: '7' })).toMatchObject({ ok: true, value: { patch: { responses: { ttl_days: 7 } } } });
  });

  it('names what is wrong at its field', () => {
    const form = formFromProject(project);
    for (const [aliases, problem] of [
      ['gpt-5', 'Line 1: write the model asked for'],
      ['a = b\na = c', 'Line 2: “a” is already given a model.'],
      ['a = a', 'would be served as itself'],
    ] as const) {
      const result = settingsPatch(project, { ...form, aliases });
      expect(result.ok, aliases).toBe(false);
      if (!result.ok) expect(result.problems.aliases).toContain(problem);
    }
    for (const days of ['', '0', '3651', 'a month']) {
      const result = settingsPatch(project, { ...form, responsesTtl: days });
      expect(result.ok, days).toBe(false);
      if (!result.ok) expect(Object.keys(result.problems)).toEqual(['responsesTtl']);
    }
    expect(fieldOfParam('model_aliases.gpt-5')).toBe('aliases');
    expect(fieldOfParam('responses.ttl_days')).toBe('responsesTtl');
  });

  it('writes and reads the aliases text both ways', () => {
    const aliases = { a: 'b', 'claude-*-latest': 'claude-sonnet-4-5' };
    expect(parseAliasesText(aliasesText(aliases))).toEqual({ ok: true, value: aliases });
    expect(aliasesText(null)).toBe('');
  });
});

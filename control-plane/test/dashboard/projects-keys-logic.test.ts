import { describe, expect, it } from 'vitest';
import type { Project } from '../../dashboard/src/api/types.js';
import { clientSnippets } from '../../dashboard/src/lib/client-snippets.js';
import { expiryFrom, keyState } from '../../dashboard/src/lib/key-expiry.js';
import { allowListState, parseSort, quotaAlerts, quotaAlertSummary, viewProjects } from '../../dashboard/src/lib/project-list.js';
import { fieldOfParam, formFromProject, parseWhole, settingsPatch } from '../../dashboard/src/lib/project-settings.js';

const project = (name: string, over: Partial<Project> = {}): Project => ({
  id: `00000000-0000-4000-8000-${String(name.length).padStart(12, '0')}`,
  name,
  quota_tokens: null,
  used_tokens: 0,
  quota_period: 'total',
  created_at: '2026-01-01T00:00:00.000Z',
  rate_limits: { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null },
  allowed_models: null,
  max_tokens_cap: null,
  mcp: null,
  cache: { mode: 'off', ttl_seconds: 3600 },
  ...over,
});

describe('project list', () => {
  const list = [
    project('beta', { created_at: '2026-01-03T00:00:00.000Z', quota_tokens: 100, used_tokens: 85 }),
    project('Alpha', { created_at: '2026-01-01T00:00:00.000Z', quota_tokens: 100, used_tokens: 100 }),
    project('gamma 10', { created_at: '2026-01-02T00:00:00.000Z', used_tokens: 5000 }),
    project('gamma 9', { created_at: '2026-01-04T00:00:00.000Z', quota_tokens: 1000, used_tokens: 10 }),
  ];
  const names = (search: string, sort: 'name' | 'created' | 'usage', page = 1, perPage = 10) => viewProjects(list, { search, sort, page }, perPage).shown.map((p) => p.name);

  it('sorts by name (numbers as numbers, case aside), newest first, or fullest quota first with unlimited last', () => {
    expect(names('', 'name')).toEqual(['Alpha', 'beta', 'gamma 9', 'gamma 10']);
    expect(names('', 'created')).toEqual(['gamma 9', 'beta', 'gamma 10', 'Alpha']);
    expect(names('', 'usage')).toEqual(['Alpha', 'beta', 'gamma 9', 'gamma 10']);
  });

  it('searches names case-insensitively and pages, clamping a page past the end', () => {
    expect(names('GAMMA', 'name')).toEqual(['gamma 9', 'gamma 10']);
    expect(names('nothing', 'name')).toEqual([]);
    expect(viewProjects(list, { search: '', sort: 'name', page: 2 }, 3)).toMatchObject({ page: 2, pages: 2, matching: 4 });
    expect(names('', 'name', 2, 3)).toEqual(['gamma 10']);
    expect(viewProjects(list, { search: '', sort: 'name', page: 9 }, 3).page).toBe(2);
    expect(viewProjects([], { search: '', sort: 'name', page: 0 }).pages).toBe(1);
    expect(parseSort('usage')).toBe('usage');
    expect(parseSort('nonsense')).toBe('name');
  });

  it('counts projects near (80 %) and out of quota, in words', () => {
    const alerts = quotaAlerts(list);
    expect(alerts.near.map((p) => p.name)).toEqual(['beta']);
    expect(alerts.exhausted.map((p) => p.name)).toEqual(['Alpha']);
    expect(quotaAlertSummary(alerts)).toBe('1 project out of quota · 1 project near its quota');
    expect(quotaAlertSummary({ near: [list[0]!, list[1]!], exhausted: [] })).toBe('2 projects near their quota');
    expect(quotaAlertSummary({ near: [], exhausted: [] })).toBeNull();
  });

  it('flags an allow-list that lets no served model through', () => {
    const served = [
      { id: 'mock-1', providers: ['mock'] },
      { id: 'mock-1-mini', providers: ['mock'] },
    ];
    expect(allowListState(null, served)).toEqual({ kind: 'all' });
    expect(allowListState([], served)).toEqual({ kind: 'none', reason: 'empty', unserved: [] });
    expect(allowListState(['gpt-4o'], served)).toEqual({ kind: 'none', reason: 'unserved', unserved: ['gpt-4o'] });
    expect(allowListState(['gpt-4o', 'mock-1'], served)).toEqual({ kind: 'some', served: ['mock-1'], unserved: ['gpt-4o'] });
    expect(allowListState(['gpt-4o'], undefined)).toEqual({ kind: 'some', served: ['gpt-4o'], unserved: [] });
  });
});

describe('project settings', () => {
  const p = project('demo', { quota_tokens: 1000, rate_limits: { key_rpm: 60, key_tpm: null, project_rpm: null, project_tpm: 5000 }, allowed_models: ['mock-1'], max_tokens_cap: 512 });

  it('sends only what changed', () => {
    const form = formFromProject(p);
    expect(settingsPatch(p, form)).toEqual({ ok: true, value: { patch: {}, clearsQuota: false } });
    const changed = settingsPatch(p, { ...form, name: ' demo 2 ', key_rpm: '', project_rpm: '1,000', modelsMode: 'all', max_tokens_cap: '4096', period: 'month' });
    expect(changed).toEqual({
      ok: true,
      value: { patch: { name: 'demo 2', quota_period: 'month', rate_limits: { key_rpm: null, project_rpm: 1000 }, allowed_models: null, max_tokens_cap: 4096 }, clearsQuota: false },
    });
    expect(settingsPatch(p, { ...form, models: [] })).toMatchObject({ ok: true, value: { patch: { allowed_models: [] } } });
  });

  it('says when the quota is being taken away', () => {
    expect(settingsPatch(p, { ...formFromProject(p), quota: '' })).toEqual({ ok: true, value: { patch: { quota_tokens: null }, clearsQuota: true } });
    const unlimited = project('u');
    expect(settingsPatch(unlimited, { ...formFromProject(unlimited), quota: '' })).toMatchObject({ ok: true, value: { clearsQuota: false } });
  });

  it('names each bad field', () => {
    const result = settingsPatch(p, { ...formFromProject(p), name: '  ', quota: '12.5', key_tpm: '-1', max_tokens_cap: '0' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(Object.keys(result.problems).sort()).toEqual(['key_tpm', 'max_tokens_cap', 'name', 'quota']);
    expect(parseWhole('3000000000', 0, 2_147_483_647)).toEqual({ ok: false, problem: 'Enter at most 2,147,483,647.' });
    expect(fieldOfParam('rate_limits.key_rpm')).toBe('key_rpm');
    expect(fieldOfParam('quota_tokens')).toBe('quota');
    expect(fieldOfParam('allowed_models.0')).toBe('models');
    expect(fieldOfParam(null)).toBeNull();
  });
});

describe('key expiry', () => {
  const now = new Date(2026, 5, 10, 12, 0, 0);

  it('turns presets, a date and never into the API value', () => {
    expect(expiryFrom('30', '', now)).toEqual({ ok: true, value: new Date(now.getTime() + 30 * 86_400_000).toISOString() });
    expect(expiryFrom('never', '', now)).toEqual({ ok: true, value: null });
    // A date means the key works through that whole local day.
    expect(expiryFrom('custom', '2026-06-10', now)).toEqual({ ok: true, value: new Date(2026, 5, 10, 23, 59, 59, 999).toISOString() });
    expect(expiryFrom('custom', '2026-06-09', now)).toEqual({ ok: false, problem: 'Pick today or a later day.' });
    expect(expiryFrom('custom', '', now)).toMatchObject({ ok: false });
    expect(expiryFrom('custom', '2026-02-31', now)).toEqual({ ok: false, problem: 'That is not a date.' });
  });

  it('marks expired and soon-expiring keys', () => {
    const t = now.getTime();
    expect(keyState({ expires_at: null }, t)).toBe('live');
    expect(keyState({ expires_at: new Date(t - 1).toISOString() }, t)).toBe('expired');
    expect(keyState({ expires_at: new Date(t + 3 * 86_400_000).toISOString() }, t)).toBe('expiring');
    expect(keyState({ expires_at: new Date(t + 30 * 86_400_000).toISOString() }, t)).toBe('live');
    expect(keyState({ expires_at: null, deleted_at: '2026-01-01T00:00:00Z' }, t)).toBe('deleted');
  });
});

describe('client snippets', () => {
  it('use the gateway address and the model, and read the key from the environment', () => {
    const snippets = clientSnippets('https://gw.example.test/', "it's-model");
    expect(snippets.map((s) => s.id)).toEqual(['curl', 'python', 'node', 'anthropic']);
    for (const s of snippets) {
      expect(s.code).toContain('https://gw.example.test');
      expect(s.code).not.toContain('gw.example.test//');
      expect(s.code).toContain('GATEWAY_API_KEY');
    }
    expect(snippets[0]!.code).toContain('https://gw.example.test/v1/chat/completions');
    // The shell quoting survives a quote in the model id.
    expect(snippets[0]!.code).toContain(`"model":"it'\\''s-model"`);
    expect(snippets[3]!.code).toContain("baseURL: 'https://gw.example.test'");
    expect(snippets[3]!.code).toContain("model: 'it\\'s-model'");
  });
});

import { describe, expect, it } from 'vitest';
import type { Project } from '../../dashboard/src/api/types.js';
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
  cache: { mode: 'off', ttl_seconds: 3600 },
};

describe('the cache in the project settings form', () => {
  it('sends nothing when unchanged, and the whole setting when the mode or the TTL changes', () => {
    const form = formFromProject(project);
    expect(form).toMatchObject({ cacheMode: 'off', cacheTtl: '3600' });
    expect(settingsPatch(project, form)).toEqual({ ok: true, value: { patch: {}, clearsQuota: false } });
    expect(settingsPatch(project, { ...form, cacheMode: 'exact' })).toMatchObject({ ok: true, value: { patch: { cache: { mode: 'exact', ttl_seconds: 3600 } } } });
    expect(settingsPatch(project, { ...form, cacheTtl: '1 800' })).toMatchObject({ ok: true, value: { patch: { cache: { mode: 'off', ttl_seconds: 1800 } } } });
  });

  it('refuses an empty, zero or too long TTL on its field', () => {
    const form = formFromProject(project);
    for (const ttl of ['', '0', '2592001', 'soon']) {
      const result = settingsPatch(project, { ...form, cacheMode: 'exact', cacheTtl: ttl });
      expect(result.ok, ttl).toBe(false);
      if (!result.ok) expect(Object.keys(result.problems)).toEqual(['cacheTtl']);
    }
    expect(fieldOfParam('cache.ttl_seconds')).toBe('cacheTtl');
  });
});

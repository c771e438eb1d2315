import { describe, expect, it } from 'vitest';
import type { Project } from '../../dashboard/src/api/types.js';
import { mcpText, parseMcpText } from '../../dashboard/src/lib/mcp-setting-text.js';
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
  cache: { mode: 'off', ttl_seconds: 3600 },
  mcp: { servers: { docs: { tools: '*' }, tickets: { tools: ['search', 'get_ticket'] } } },
};

describe('the MCP setting in the project settings form', () => {
  it('shows one line per server and reads it back', () => {
    expect(mcpText(project.mcp)).toBe('docs: *\ntickets: search, get_ticket');
    expect(parseMcpText('docs\n\n tickets: search,get_ticket, search ')).toEqual({ ok: true, value: project.mcp });
    expect(parseMcpText('  ')).toEqual({ ok: true, value: null });
    expect(parseMcpText('a__b: x')).toMatchObject({ ok: false });
    expect(parseMcpText('docs\ndocs: x')).toMatchObject({ ok: false, problem: expect.stringContaining('twice') });
  });

  it('keeps prompts and resources through the form, URIs with colons included', () => {
    const setting = { servers: { docs: { tools: ['search'], prompts: ['summary'], resources: ['docs://public/*', 'file:///a.md'] }, wiki: { tools: '*' as const, prompts: '*' as const } } };
    const text = mcpText(setting);
    expect(text).toBe('docs: search; prompts: summary; resources: docs://public/*, file:///a.md\nwiki: *; prompts: *');
    expect(parseMcpText(text)).toEqual({ ok: true, value: setting });
    expect(parseMcpText('docs: *; tools: x')).toMatchObject({ ok: false, problem: expect.stringContaining('prompts') });
  });

  it('sends the setting only when it changed, null when emptied', () => {
    const form = formFromProject(project);
    expect(settingsPatch(project, form)).toEqual({ ok: true, value: { patch: {}, clearsQuota: false } });
    expect(settingsPatch(project, { ...form, mcp: 'docs: search' })).toMatchObject({ ok: true, value: { patch: { mcp: { servers: { docs: { tools: ['search'] } } } } } });
    expect(settingsPatch(project, { ...form, mcp: '' })).toMatchObject({ ok: true, value: { patch: { mcp: null } } });
    expect(settingsPatch(project, { ...form, mcp: 'bad name!' })).toMatchObject({ ok: false, problems: { mcp: expect.any(String) } });
    expect(fieldOfParam('mcp.servers')).toBe('mcp');
  });
});

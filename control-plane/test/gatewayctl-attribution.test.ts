import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../test-support/processes.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';

/** gatewayctl's cost-attribution options, run as the compiled bin against a real control plane. */
const BIN = join(ROOT, 'control-plane/dist/cli/gatewayctl.js');
let h: Harness;
let dir: string;

function ctl(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, GATEWAYCTL_CONFIG: join(dir, 'config.json') }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  h = await startHarness('gatewayctl-attribution');
  dir = mkdtempSync(join(tmpdir(), 'gatewayctl-attribution-'));
  const login = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, '--password-stdin'], `${ADMIN_PASSWORD}\n`);
  expect(login.code, login.stderr).toBe(0);
});

afterAll(async () => {
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('gatewayctl attribution', () => {
  it('creates a key with default tags, and filters and groups usage by tag and end user', async () => {
    const project = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'ctl tags' } })).body.id as string;
    const created = await ctl(['keys', 'create', project, '--name', 'search', '--tags', 'team=search,env=prod']);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; tags: Record<string, string> };
    expect(key.tags).toEqual({ team: 'search', env: 'prod' });
    const refused = await ctl(['keys', 'create', project, '--name', 'bad', '--tags', 'Team=x']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('`Team`');

    const now = Date.now();
    const row = (i: number, tags: Record<string, string>, endUser: string | null) => ({
      ts: now - i * 1000, id: randomUUID(), request_id: `ctl-${i}`, project_id: project, key_id: key.id, model: 'm', provider: 'p',
      input_tokens: 1, output_tokens: 1, total_tokens: 2, cached_tokens: 0, cost_usd: null, latency_ms: 1, finish_reason: 'stop',
      provider_finish_reason: null, stream: false, endpoint: 'chat.completions', tags: h.sql.json(tags), end_user: endUser,
    });
    await h.sql`insert into usage_records ${h.sql([row(1, { team: 'search', feature: 'rag' }, 'alice'), row(2, { team: 'search' }, 'bob'), row(3, { team: 'ads' }, 'alice')] as never)}`;

    const listed = await ctl(['usage', '--project', project, '--tag', 'team=search,feature=rag']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { data: { request_id: string }[] }).data.map((r) => r.request_id)).toEqual(['ctl-1']);
    const alice = await ctl(['usage', '--project', project, '--end-user', 'alice']);
    expect((JSON.parse(alice.stdout) as { data: { request_id: string }[] }).data.map((r) => r.request_id)).toEqual(['ctl-1', 'ctl-3']);

    const byTeam = await ctl(['usage', 'summary', '--project', project, '--group-by', 'tag:team']);
    expect(byTeam.code, byTeam.stderr).toBe(0);
    const summary = JSON.parse(byTeam.stdout) as { data: { tag: string | null; requests: number }[]; totals: { requests: number } };
    expect(summary.data.map((g) => [g.tag, g.requests])).toEqual([
      ['search', 2],
      ['ads', 1],
    ]);
    expect(summary.totals.requests).toBe(3);

    const csv = await ctl(['usage', '--project', project, '--end-user', 'bob', '--output', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split(/\r?\n/)[0]).toMatch(/,tags,end_user$/);
    expect(csv.stdout).toContain('team=search,bob');
  });
});

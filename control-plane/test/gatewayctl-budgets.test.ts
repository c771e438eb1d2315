import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../test-support/processes.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';

/** `gatewayctl budgets`, the compiled bin as a child process against a real control plane. */
const BIN = join(ROOT, 'control-plane/dist/cli/gatewayctl.js');
let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness('ctlbudgets');
  dir = mkdtempSync(join(tmpdir(), 'gatewayctl-budgets-'));
  const login = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, '--password-stdin'], `${ADMIN_PASSWORD}\n`);
  expect(login.code, login.stderr).toBe(0);
});

afterAll(async () => {
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

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

describe('gatewayctl budgets', () => {
  it('creates, lists and deletes budgets', async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'ctl budgets' } });
    const made = await ctl(['budgets', 'create', project.body.id, '--limit', '25', '--period', 'month', '--timezone', 'Europe/Paris', '--alert-at', '80%,1']);
    expect(made.code, made.stderr).toBe(0);
    const budget = JSON.parse(made.stdout);
    expect(budget).toMatchObject({ scope: 'project', limit_usd: 25, period: 'month', timezone: 'Europe/Paris', alert_at: [0.8, 1] });
    const tagged = await ctl(['budgets', 'create', 'ctl budgets', '--limit', '0.50', '--period', '6h', '--tag', 'team=search']);
    expect(tagged.code, tagged.stderr).toBe(0);

    const table = await ctl(['budgets', 'list', project.body.id, '-o', 'table']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('tag team=search');
    expect(table.stdout).toContain('month (Europe/Paris)');
    const list = JSON.parse((await ctl(['budgets', 'list', project.body.id])).stdout);
    expect(list.data).toHaveLength(2);

    expect((await ctl(['budgets', 'create', project.body.id, '--limit', 'lots', '--period', 'day'])).code).toBe(2);
    const badZone = await ctl(['budgets', 'create', project.body.id, '--limit', '1', '--period', 'day', '--timezone', 'Nowhere/Else']);
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toContain('timezone');

    // Without a terminal and without --yes nothing is deleted.
    expect((await ctl(['budgets', 'delete', project.body.id, budget.id])).code).not.toBe(0);
    const deleted = await ctl(['budgets', 'delete', project.body.id, budget.id, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse((await ctl(['budgets', 'list', project.body.id])).stdout).data).toHaveLength(1);
  });
});

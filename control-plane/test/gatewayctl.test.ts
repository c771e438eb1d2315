import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRecordId } from '@gateway/shared';
import { startProxy, type Proxy } from '../../proxy/src/proxy.js';
import { TEST_REDIS_URL } from '../../test-support/databases.js';
import { eventually, ROOT } from '../../test-support/processes.js';
import { startWriter, type Writer } from '../src/writer/start-writer.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';
import { freePort } from '../../test-support/services.js';

/**
 * gatewayctl, the compiled bin, run as a child process against a real control plane (with a real
 * proxy and writer for the key and health checks), with its own config file in a temporary
 * directory. Its stdout is a pipe, so its default output is JSON.
 */
const BIN = join(ROOT, 'control-plane/dist/cli/gatewayctl.js');

let h: Harness;
let proxy: Proxy;
let writer: Writer;
let dir: string;
let configFile: string;

beforeAll(async () => {
  h = await startHarness('gatewayctl');
  const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...shared, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', DRAIN_TIMEOUT_MS: '1000' });
  // WRITER_PORT=0 means no port at all; the health check needs one.
  writer = await startWriter({ ...shared, DATABASE_URL: h.db.url, WRITER_PORT: String(await freePort()) });
  dir = mkdtempSync(join(tmpdir(), 'gatewayctl-'));
  configFile = join(dir, 'config.json');
});

afterAll(async () => {
  await proxy?.drain();
  await writer?.close();
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exit: Promise<Run>;
}

/** Every line gatewayctl wrote to stderr in this file, to prove no token or password is in any. */
const allStderr: string[] = [];

function start(args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}): Running {
  const env: Record<string, string | undefined> = { ...process.env, GATEWAYCTL_CONFIG: configFile, NO_COLOR: undefined, ...options.env };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(options.stdin ?? '');
  const exit = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      allStderr.push(stderr);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

const ctl = (args: string[], options: { stdin?: string; env?: Record<string, string | undefined> } = {}) => start(args, options).exit;

function json<T = any>(run: Run): T {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** RFC 4180, enough for the test: quoted fields with doubled quotes, CRLF lines. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += c;
  }
  return rows;
}

async function signIn(): Promise<void> {
  const run = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n` });
  expect(run.code, run.stderr).toBe(0);
}

function savedToken(): string {
  return JSON.parse(readFileSync(configFile, 'utf8')).token as string;
}

function gateway(apiKey: string): Promise<number> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/models`, { headers: { 'x-api-key': apiKey } }).then((r) => r.status);
}

describe('command line', () => {
  it('prints its help, and exits 2 on a bad flag, a missing argument or an unknown format', async () => {
    // `npx gatewayctl` from the repository root runs the root package's bin: the same file as the workspace's.
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const workspace = JSON.parse(readFileSync(join(ROOT, 'control-plane/package.json'), 'utf8'));
    expect(join(ROOT, root.bin.gatewayctl)).toBe(BIN);
    expect(join(ROOT, 'control-plane', workspace.bin.gatewayctl)).toBe(BIN);
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);

    const help = await ctl(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('keys rotate <project> <key>');
    expect(help.stdout).toContain('Exit status: 0 ok, 1 the API refused');

    const bogus = await ctl(['projects', 'list', '--bogus']);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("Unknown option '--bogus'");
    expect((await ctl(['projects', 'get'])).code).toBe(2);
    expect((await ctl(['projects', 'list', '-o', 'yaml'])).code).toBe(2);
    expect((await ctl(['usage', '--from', 'last tuesday'])).code).toBe(2);
    expect((await ctl(['projects', 'launch'])).code).toBe(2);
    expect((await ctl([])).code).toBe(2);
  });

  it('never takes a password as a flag, and does not repeat it', async () => {
    const run = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, `--password=${ADMIN_PASSWORD}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--password-stdin');
    expect(run.stderr).not.toContain(ADMIN_PASSWORD);
    // Without a terminal there is nobody to ask the password of.
    const noTerminal = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL]);
    expect(noTerminal.code).toBe(2);
  });
});

describe('login and logout', () => {
  it('exits 3 before anyone signed in', async () => {
    const run = await ctl(['projects', 'list']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('gatewayctl login');
  });

  it('exits 3 on a wrong password and saves nothing', async () => {
    const run = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, '--password-stdin'], { stdin: 'not the password\n' });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('Wrong email or password. (UNAUTHORIZED)');
    expect(existsSync(configFile)).toBe(false);
  });

  it('signs in with the password from stdin and keeps the token owner-only, replacing a looser file', async () => {
    // The default place, under a HOME of the test's own: directory 0700, file 0600.
    const home = join(dir, 'home');
    const file = join(home, '.config', 'gatewayctl', 'config.json');
    mkdirSync(join(home, '.config', 'gatewayctl'), { recursive: true, mode: 0o755 });
    writeFileSync(file, '{"url":"http://old.example"}', { mode: 0o644 });
    const env = { GATEWAYCTL_CONFIG: undefined, HOME: home };
    const run = await ctl(['login', '--url', `${h.base}/`, '--email', ADMIN_EMAIL, '--password-stdin'], { stdin: `${ADMIN_PASSWORD}\n`, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Signed in to ${h.base} as ${ADMIN_EMAIL}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, '.config', 'gatewayctl')).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved).toEqual({ url: h.base, email: ADMIN_EMAIL, token: expect.any(String), expires_at: expect.any(Number) });
    expect(readFileSync(file, 'utf8')).not.toContain(ADMIN_PASSWORD);
    const me = await ctl(['whoami'], { env });
    expect(json(me)).toMatchObject({ email: ADMIN_EMAIL, role: 'admin' });

    // The test's own file, for everything below.
    await signIn();
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
  });

  it('refreshes a token close to its expiry and saves the new one', async () => {
    await signIn();
    const before = JSON.parse(readFileSync(configFile, 'utf8'));
    writeFileSync(configFile, JSON.stringify({ ...before, expires_at: Date.now() + 60_000 }), { mode: 0o600 });
    const since = Date.now();
    expect(json(await ctl(['whoami'])).email).toBe(ADMIN_EMAIL);
    const after = JSON.parse(readFileSync(configFile, 'utf8'));
    expect(after.token).not.toBe(before.token);
    expect(after.expires_at).toBeGreaterThan(since + 50 * 60_000);
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    const refreshed = await h.sql`select 1 from audit_events where type = 'signin.refreshed' and ts >= ${since}`;
    expect(refreshed.length).toBe(1);
  });

  it('exits 3 when the API refuses the token', async () => {
    await signIn();
    expect((await h.api('POST', '/v1/signouts', { token: savedToken() })).status).toBe(204);
    const run = await ctl(['projects', 'list']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('This session was signed out; sign in again. (UNAUTHORIZED)');
  });

  it('signs out: the session ends on the server and the token leaves the file', async () => {
    await signIn();
    const token = savedToken();
    const run = await ctl(['logout']);
    expect(run.code, run.stderr).toBe(0);
    expect((await h.api('GET', '/v1/users/me', { token })).status).toBe(401);
    const saved = JSON.parse(readFileSync(configFile, 'utf8'));
    expect(saved).toEqual({ url: h.base, email: ADMIN_EMAIL });
    expect((await ctl(['projects', 'list'])).code).toBe(3);
  });

  it('exits 4 when the control plane cannot be reached', async () => {
    await signIn();
    const saved = JSON.parse(readFileSync(configFile, 'utf8'));
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify({ ...saved, url: `http://127.0.0.1:${await freePort()}` }), { mode: 0o600 });
    const run = await ctl(['projects', 'list'], { env: { GATEWAYCTL_CONFIG: elsewhere } });
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });
});

describe('projects', () => {
  beforeAll(signIn);

  it('guardrails set from a file or stdin, and get; an invalid guardrail exits 1 naming it', async () => {
    const project = json(await ctl(['projects', 'create', 'cli guarded']));
    const list = [
      { id: 'no-secrets', stage: 'both', type: 'pii', action: 'block', entities: ['secret'] },
      { id: 'codes', stage: 'output', type: 'regex', action: 'mask', patterns: ['PROJ-[0-9]+'] },
    ];
    const file = join(dir, 'guardrails.json');
    writeFileSync(file, JSON.stringify(list));
    const set = json(await ctl(['guardrails', 'set', 'cli guarded', '--file', file]));
    expect(set).toEqual({ data: list });
    expect(json(await ctl(['guardrails', 'get', project.id]))).toEqual({ data: list });
    const bad = await ctl(['guardrails', 'set', 'cli guarded', '--file', '-'], { stdin: '[{"id":"twice","stage":"input","type":"regex","action":"block","patterns":["(a)\\\\1"]}]' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('twice');
    expect(json(await ctl(['guardrails', 'set', 'cli guarded', '--file', '-'], { stdin: '[]' }))).toEqual({ data: [] });
  });

  it('create with every policy flag; the JSON is the API answer as it is', async () => {
    const created = json(
      await ctl(['projects', 'create', 'cli demo', '--quota', '100000', '--period', 'month', '--key-rpm', '60', '--project-tpm', '200000', '--allowed-models', 'gpt-4o-mini,mock-1', '--max-tokens-cap', '4096', '--mcp', 'docs;tickets=search,get_ticket', '--cache', 'exact', '--cache-ttl', '600']),
    );
    expect(created).toEqual({
      id: expect.any(String),
      name: 'cli demo',
      quota_tokens: 100000,
      quota_period: 'month',
      used_tokens: 0,
      rate_limits: { key_rpm: 60, key_tpm: null, project_rpm: null, project_tpm: 200000 },
      allowed_models: ['gpt-4o-mini', 'mock-1'],
      max_tokens_cap: 4096,
      mcp: { servers: { docs: { tools: '*' }, tickets: { tools: ['search', 'get_ticket'] } } },
      cache: { mode: 'exact', ttl_seconds: 600 },
      unsupported_params: 'drop',
      responses: { ttl_days: 30 },
      created_at: expect.any(String),
    });
    expect((await h.api('GET', `/v1/projects/${created.id}`, { token: h.adminToken })).body).toEqual(created);

    const updated = json(await ctl(['projects', 'update', 'cli demo', '--quota', 'none', '--key-rpm', '120', '--any-model', '--mcp', 'none', '--cache', 'off', '--name', 'cli demo (prod)']));
    expect(updated).toMatchObject({ id: created.id, name: 'cli demo (prod)', quota_tokens: null, allowed_models: null, mcp: null, cache: { mode: 'off' }, rate_limits: { key_rpm: 120, project_tpm: 200000 } });
    // A TTL alone would switch the cache off (the setting is replaced whole): refused.
    expect((await ctl(['projects', 'update', created.id, '--cache-ttl', '60'])).code).toBe(2);
    const purged = json(await ctl(['projects', 'purge-cache', 'cli demo (prod)']));
    expect(purged).toEqual({ purged: 0 });
    expect(json(await ctl(['projects', 'get', 'cli demo (prod)']))).toEqual(updated);
    expect((await ctl(['projects', 'update', created.id])).code).toBe(2);
  });

  it('list as an aligned table, as JSON, and as quoted CSV', async () => {
    await ctl(['projects', 'create', 'say "hi", then go']);
    await ctl(['projects', 'create', 'x']);
    const api = (await h.api('GET', '/v1/projects', { token: h.adminToken })).body;

    expect(json(await ctl(['projects', 'list']))).toEqual(api);
    expect(json(await ctl(['projects', 'list', '-o', 'json']))).toEqual(api);

    const table = await ctl(['projects', 'list', '--output', 'table']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    const [header, ...rows] = lines as [string, ...string[]];
    expect(header).toMatch(/^ID +NAME +QUOTA +PERIOD +USED .* CREATED$/);
    expect(rows).toHaveLength(api.data.length);
    for (const project of api.data) {
      const row = rows.find((r) => r.startsWith(project.id)) as string;
      expect(row.indexOf(project.name)).toBe(header.indexOf('NAME'));
      expect(row.indexOf(project.quota_period)).toBeGreaterThanOrEqual(header.indexOf('PERIOD'));
      expect(row.slice(header.indexOf('CREATED'))).toBe(project.created_at.replace('T', ' ').slice(0, 19));
    }
    expect(table.stdout).not.toContain('\u001b');
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);

    const csv = await ctl(['projects', 'list', '-o', 'csv']);
    expect(csv.stdout).toContain('"say ""hi"", then go"');
    const [fields, ...records] = parseCsv(csv.stdout) as [string[], ...string[][]];
    expect(fields).toEqual([
      'id',
      'name',
      'quota_tokens',
      'quota_period',
      'used_tokens',
      'rate_limits.key_rpm',
      'rate_limits.key_tpm',
      'rate_limits.project_rpm',
      'rate_limits.project_tpm',
      'allowed_models',
      'max_tokens_cap',
      'mcp',
      'cache',
      'created_at',
    ]);
    expect(records.map((r) => r[1]).sort()).toEqual(api.data.map((p: { name: string }) => p.name).sort());
    const demo = records.find((r) => r[1] === 'cli demo (prod)') as string[];
    expect(demo.slice(2, 5)).toEqual(['', 'month', '0']);
  });

  it('delete asks first: without a terminal and without --yes nothing is deleted', async () => {
    const project = json(await ctl(['projects', 'create', 'doomed']));
    const refused = await ctl(['projects', 'delete', 'doomed']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken })).status).toBe(200);
    const run = await ctl(['projects', 'delete', 'doomed', '--yes']);
    expect(run.code, run.stderr).toBe(0);
    expect((await h.api('GET', `/v1/projects/${project.id}`, { token: h.adminToken })).status).toBe(404);
  });

  it('exits 1 with the API message and code on a 404', async () => {
    const run = await ctl(['projects', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('gatewayctl: No such project. (NOT_FOUND, HTTP 404)\n');
    const byName = await ctl(['projects', 'get', 'no such name']);
    expect(byName.code).toBe(1);
    expect(byName.stderr).toContain('No project named "no such name". (NOT_FOUND)');
  });
});

describe('keys', () => {
  let projectId: string;
  beforeAll(async () => {
    await signIn();
    projectId = json(await ctl(['projects', 'create', 'keyed'])).id;
  });

  it('create prints the secret once, alone on stdout with --quiet; rotate and delete make the gateway refuse the old ones', async () => {
    const quiet = await ctl(['keys', 'create', 'keyed', '--name', 'ci', '--quiet']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout).toMatch(/^gw_[A-Za-z0-9_-]{43}\n$/);
    const first = quiet.stdout.trim();
    expect(await gateway(first)).toBe(200);
    const [listed] = json(await ctl(['keys', 'list', projectId])).data;
    expect(listed).toMatchObject({ name: 'ci', project_id: projectId });
    expect(first.startsWith(listed.prefix)).toBe(true);
    expect(JSON.stringify(listed)).not.toContain(first);

    // Without a terminal rotate cannot ask about the old key, so it creates nothing.
    expect((await ctl(['keys', 'rotate', 'keyed', 'ci'])).code).toBe(2);
    expect(json(await ctl(['keys', 'list', projectId])).data).toHaveLength(1);

    const rotated = await ctl(['keys', 'rotate', 'keyed', listed.prefix, '--yes', '--quiet']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/^gw_[A-Za-z0-9_-]{43}\n$/);
    const second = rotated.stdout.trim();
    expect(second).not.toBe(first);
    await eventually(async () => (await gateway(first)) === 401, 'the rotated-out key refused');
    expect(await gateway(second)).toBe(200);
    const [replacement] = json(await ctl(['keys', 'list', projectId])).data;
    expect(replacement).toMatchObject({ name: 'ci' });
    expect(replacement.id).not.toBe(listed.id);

    const deleted = await ctl(['keys', 'delete', 'keyed', replacement.id, '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    await eventually(async () => (await gateway(second)) === 401, 'the deleted key refused');
    expect(json(await ctl(['keys', 'list', projectId])).data).toEqual([]);
    expect((await ctl(['keys', 'delete', 'keyed', replacement.id, '--yes'])).code).toBe(1);
  });

  it('create shows the new key as JSON, with an expiry given as a duration', async () => {
    const since = Date.now();
    const key = json(await ctl(['keys', 'create', projectId, '--name', 'temp', '--expires', '30d']));
    expect(key).toMatchObject({ project_id: projectId, name: 'temp', key: expect.stringMatching(/^gw_/) });
    const expires = Date.parse(key.expires_at);
    expect(expires).toBeGreaterThanOrEqual(since + 30 * 86_400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
  });
});

describe('members and users', () => {
  beforeAll(signIn);

  it('add a member by email in any case, list and remove them', async () => {
    const project = json(await ctl(['projects', 'create', 'team']));
    const user = await h.createUser();
    const added = json(await ctl(['members', 'add', 'team', user.email.toUpperCase(), '--role', 'viewer']));
    expect(added).toEqual({ project_id: project.id, user_id: user.id, email: user.email, role: 'viewer', created_at: expect.any(String) });
    const csv = parseCsv((await ctl(['members', 'list', 'team', '-o', 'csv'])).stdout);
    expect(csv[0]).toEqual(['project_id', 'user_id', 'email', 'role', 'created_at']);
    expect(csv.slice(1).map((r) => [r[2], r[3]])).toEqual(expect.arrayContaining([[user.email, 'viewer'], [ADMIN_EMAIL, 'owner']]));
    const unknown = await ctl(['members', 'add', 'team', 'nobody@example.test']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('(NOT_FOUND, HTTP 404)');

    expect((await ctl(['members', 'remove', 'team', user.email])).code).toBe(0);
    const members = (await h.api('GET', `/v1/projects/${project.id}/members`, { token: h.adminToken })).body.data;
    expect(members.map((m: { email: string }) => m.email)).toEqual([ADMIN_EMAIL]);
  });

  it('create, list, disable and enable accounts', async () => {
    const email = `cli-${randomUUID().slice(0, 8)}@example.test`;
    const created = json(await ctl(['users', 'create', email, '--password-stdin'], { stdin: 'a long enough passphrase\n' }));
    expect(created).toMatchObject({ email, role: 'member', disabled: false });
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password: 'a long enough passphrase' } })).status).toBe(200);
    const again = await ctl(['users', 'create', email, '--password-stdin'], { stdin: 'a long enough passphrase\n' });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(CONFLICT, HTTP 409)');

    expect(json(await ctl(['users', 'list', '--email', email.slice(0, 12)])).data).toEqual([created]);
    expect(json(await ctl(['users', 'disable', email.toUpperCase()]))).toMatchObject({ id: created.id, disabled: true });
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password: 'a long enough passphrase' } })).status).toBe(401);
    expect(json(await ctl(['users', 'enable', created.id]))).toMatchObject({ disabled: false });
  });
});

describe('usage and audit', () => {
  const now = Date.now();
  const H = 3_600_000;
  let a: string;
  let b: string;
  const keyA = randomUUID();

  beforeAll(async () => {
    await signIn();
    a = json(await ctl(['projects', 'create', 'records A'])).id;
    b = json(await ctl(['projects', 'create', 'records B'])).id;
    const usage = (ts: number, project_id: string, model: string, provider: string, key_id: string, finish_reason = 'stop') => ({
      ts,
      id: randomUUID(),
      request_id: `req-${randomUUID()}`,
      project_id,
      key_id,
      model,
      provider,
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      cached_tokens: 2,
      cost_usd: model === 'gpt-4o-mini' ? 0.0000195 : null,
      latency_ms: 12,
      finish_reason,
      provider_finish_reason: null,
      stream: false,
      endpoint: 'chat.completions',
    });
    await h.sql`insert into usage_records ${h.sql([
      usage(now - 1 * H, a, 'gpt-4o-mini', 'openai', keyA),
      usage(now - 2 * H, a, 'gpt-4o-mini', 'openai', keyA, 'max_tokens'),
      usage(now - 3 * H, a, 'mock-1', 'mock', randomUUID()),
      usage(now - 72 * H, a, 'mock-1', 'mock', keyA),
      usage(now - 240 * H, a, 'gpt-4o-mini', 'openai', randomUUID()),
      usage(now - 1 * H, b, 'mock-1', 'mock', randomUUID()),
    ])}`;
    const audit = (ts: number, project_id: string | null, type: string, outcome: string) => ({
      ts,
      id: newRecordId(),
      request_id: `req-${randomUUID()}`,
      type,
      outcome,
      status: outcome === 'success' ? 200 : 401,
      project_id,
      endpoint: null,
      attempts: 0,
      providers: [],
      latency_ms: 5,
    });
    await h.sql`insert into audit_events ${h.sql([
      audit(now - 1 * H, a, 'gateway.request', 'success'),
      audit(now - 2 * H, a, 'gateway.request', 'auth_failed'),
      audit(now - 48 * H, a, 'gateway.request', 'success'),
      audit(now - 1 * H, b, 'gateway.request', 'auth_failed'),
    ])}`;
  });

  // Seeded records are named by their age, in hours before `now`.
  const ages = (run: Run) => (json(run).data as { timestamp: number }[]).map((r) => now - r.timestamp);

  it('filter usage by project, key, model, provider, finish reason and relative or ISO times', async () => {
    expect(ages(await ctl(['usage', '--project', 'records A']))).toEqual([1 * H, 2 * H, 3 * H, 72 * H, 240 * H]);
    expect(ages(await ctl(['usage', '--project', a, '--from', '24h']))).toEqual([1 * H, 2 * H, 3 * H]);
    expect(ages(await ctl(['usage', '--project', a, '--to', '7d']))).toEqual([240 * H]);
    expect(ages(await ctl(['usage', '--project', a, '--key', keyA, '--order', 'asc']))).toEqual([72 * H, 2 * H, 1 * H]);
    expect(ages(await ctl(['usage', '--project', a, '--model', 'mock-1', '--provider', 'mock']))).toEqual([3 * H, 72 * H]);
    expect(ages(await ctl(['usage', '--project', a, '--finish-reason', 'max_tokens']))).toEqual([2 * H]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(ages(await ctl(['usage', '--project', a, '--from', iso(now - 80 * H), '--to', iso(now - 2 * H)]))).toEqual([3 * H, 72 * H]);
    expect(ages(await ctl(['usage', '--provider', 'mock', '--from', '2h']))).toEqual([1 * H]);
    const bad = await ctl(['usage', '--finish-reason', 'bored']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('(INVALID_REQUEST, HTTP 400)');
  });

  it('page with --limit, and through every page with --all', async () => {
    const page = json(await ctl(['usage', '--project', a, '--limit', '2']));
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    const next = json(await ctl(['usage', '--project', a, '--limit', '2', '--cursor', page.next_cursor]));
    expect(next.data.map((r: { id: string }) => r.id)).not.toContain(page.data[0].id);
    const all = json(await ctl(['usage', '--project', a, '--limit', '2', '--all']));
    expect(all).toEqual({ data: expect.any(Array), next_cursor: null, has_more: false });
    expect(all.data.map((r: { timestamp: number }) => now - r.timestamp)).toEqual([1 * H, 2 * H, 3 * H, 72 * H, 240 * H]);
    const table = await ctl(['usage', '--project', a, '--limit', '2', '-o', 'table']);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(table.stderr).toContain('More follow: add --all for every page');
  });

  it('print usage as CSV and sums per group', async () => {
    const csv = parseCsv((await ctl(['usage', '--project', a, '--model', 'gpt-4o-mini', '-o', 'csv'])).stdout);
    expect(csv[0]?.slice(0, 3)).toEqual(['id', 'request_id', 'timestamp']);
    expect(csv).toHaveLength(4);
    expect(csv[1]?.[csv[0]?.indexOf('cost_usd') as number]).toBe('0.0000195');
    expect(csv[1]?.[2]).toBe(new Date(now - 1 * H).toISOString());

    const summary = json(await ctl(['usage', 'summary', '--group-by', 'model', '--project', 'records A']));
    const api = (await h.api('GET', `/v1/usage/summary?group_by=model&project_id=${a}`, { token: h.adminToken })).body;
    expect(summary).toEqual(api);
    expect(summary.totals).toMatchObject({ requests: 5, tokens: { input: 50, output: 25, total: 75, cached: 10 } });
    const table = await ctl(['usage', 'summary', '--group-by', 'project', '--from', '24h', '-o', 'table']);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^PROJECT +REQUESTS +IN +OUT +CACHED +TOTAL +COST USD$/);
    expect(lines.find((l) => l.startsWith(a))).toMatch(/ 3 +30 +15 +6 +45 +0\.000039$/);
    expect(lines.at(-1)).toMatch(/^TOTAL +4 +40 +20 +8 +60 +0\.000039$/);
  });

  it('filter audit events by project, type, outcome and time', async () => {
    expect(ages(await ctl(['audit', '--project', a, '--type', 'gateway.request']))).toEqual([1 * H, 2 * H, 48 * H]);
    // --to leaves out the requests the key tests sent through the proxy just now.
    expect(ages(await ctl(['audit', '--type', 'gateway.request', '--outcome', 'auth_failed', '--to', '30m']))).toEqual([1 * H, 2 * H]);
    expect(ages(await ctl(['audit', '--project', a, '--type', 'gateway.request', '--from', '36h', '--outcome', 'success']))).toEqual([1 * H]);
    const created = json(await ctl(['audit', '--project', 'records B', '--type', 'project.created']));
    expect(created.data).toEqual([expect.objectContaining({ type: 'project.created', outcome: 'success', project_id: b, actor: expect.any(String), user_agent: 'gatewayctl' })]);
  });

  it('audit --follow prints an event that lands after it started, and stops on SIGINT', async () => {
    const follow = start(['audit', '--follow', '--type', 'project.created', '--interval', '0.2']);
    await eventually(() => follow.stderr().includes('Following audit events from'), 'follow started');
    const project = (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'followed' } })).body;
    const line = await eventually(() => follow.stdout().split('\n').find((l) => l.includes(project.id)), 'the event printed');
    expect(JSON.parse(line)).toMatchObject({ type: 'project.created', project_id: project.id, outcome: 'success' });
    follow.child.kill('SIGINT');
    const run = await follow.exit;
    expect(run.code).toBe(0);
    // Only the one new event: the projects created before it started are not repeated.
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
  });
});

describe('health', () => {
  let unready: Server;
  beforeAll(async () => {
    await signIn();
    unready = createServer((req, res) => {
      res.writeHead(req.url === '/readyz' ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: req.url === '/readyz' ? 'unavailable' : 'ok' }));
    });
    await new Promise<void>((resolve) => unready.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => unready.close(() => resolve())));

  it('checks the control plane, a proxy and a writer: exit 0 when all are ready', async () => {
    const run = await ctl(['health', '--proxy', `http://127.0.0.1:${proxy.metricsPort}`, '--writer', `http://127.0.0.1:${writer.port}`]);
    const checks = json(run);
    expect(checks.map((c: { target: string; check: string; http_status: number }) => [c.target, c.check, c.http_status])).toEqual([
      ['control-plane', 'healthz', 200],
      ['control-plane', 'readyz', 200],
      ['proxy', 'healthz', 200],
      ['proxy', 'readyz', 200],
      ['writer', 'healthz', 200],
      ['writer', 'readyz', 200],
    ]);
    expect(checks[1].body).toEqual({ status: 'ready', postgres: true, redis: true });
  });

  it('exits 1 when something is not ready, and 4 when something cannot be reached', async () => {
    const notReady = await ctl(['health', '--writer', `http://127.0.0.1:${(unready.address() as { port: number }).port}`, '-o', 'table']);
    expect(notReady.code).toBe(1);
    expect(notReady.stdout).toMatch(/writer +readyz +503 +no +status=unavailable/);
    const dead = await ctl(['health', '--url', `http://127.0.0.1:${await freePort()}`]);
    expect(dead.code).toBe(4);
    expect(JSON.parse(dead.stdout)[0]).toMatchObject({ target: 'control-plane', http_status: null, ok: false, error: 'unreachable: ECONNREFUSED' });
  });
});

describe('secrets', () => {
  it('--verbose shows the requests, never the token or the password', async () => {
    const login = await ctl(['login', '--url', h.base, '--email', ADMIN_EMAIL, '--password-stdin', '--verbose'], { stdin: ADMIN_PASSWORD });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`> POST ${h.base}/v1/signins`);
    expect(login.stderr).toContain('"password":"(not shown)"');
    expect(login.stderr).toContain('< 200 OK');
    const list = await ctl(['projects', 'list', '-v']);
    expect(list.stderr).toContain(`> GET ${h.base}/v1/projects`);
    expect(list.stderr).toContain('> authorization: (not shown)');
    expect(list.stderr).not.toContain(savedToken());
    for (const stderr of allStderr) {
      expect(stderr).not.toContain(ADMIN_PASSWORD);
      expect(stderr).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
    }
  });
});

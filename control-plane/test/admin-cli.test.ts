import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../test-support/processes.js';
import { startHarness, type Harness } from './harness.js';

/** `npm run admin`: the compiled recovery command, run against the database of a live control plane. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness('admincli');
});
afterAll(async () => h?.close());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function admin(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['control-plane/dist/admin-main.js', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: h.db.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

const signin = (email: string, password: string) => h.api('POST', '/v1/signins', { body: { grant_type: 'password', email, password } });

describe('npm run admin -- reset-password', () => {
  it('gives a locked-out, disabled account a generated password, enables it and ends its sessions', async () => {
    const user = await h.createUser();
    expect((await h.api('PATCH', `/v1/users/${user.id}`, { token: h.adminToken, body: { disabled: true } })).status).toBe(200);
    const run = await admin(['reset-password', user.email.toUpperCase()]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Password of ${user.email.toUpperCase()} reset, account enabled; every session it had is ended.`);
    const password = /New password \(shown once\): (\S+)\n/.exec(run.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);

    expect((await signin(user.email, user.password)).status).toBe(401);
    const fresh = await signin(user.email, password as string);
    expect(fresh.status).toBe(200);
    expect((await h.api('GET', '/v1/users/me', { token: fresh.body.access_token })).body.disabled).toBe(false);

    const events = await h.sql`
      select type, outcome, actor, user_agent from audit_events where type in ('password.reset', 'user.enabled') and actor is null order by ts, id`;
    expect(events).toEqual([
      { type: 'password.reset', outcome: 'success', actor: null, user_agent: 'local-admin (npm run admin -- reset-password)' },
      { type: 'user.enabled', outcome: 'success', actor: null, user_agent: 'local-admin (npm run admin -- reset-password)' },
    ]);
    expect(JSON.stringify(await h.sql`select * from audit_events`)).not.toContain(password);
  });

  it('ends the sessions of an enabled account too, right away', async () => {
    const user = await h.createUser();
    const run = await admin(['reset-password', user.email]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('account enabled');
    const refused = await h.api('GET', '/v1/users/me', { token: user.token });
    expect(refused.status).toBe(401);
  });

  it('takes the password from standard input and then prints none', async () => {
    const user = await h.createUser();
    const run = await admin(['reset-password', user.email, '--password-stdin'], 'chosen by the operator\n');
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('chosen by the operator');
    expect(run.stdout).not.toContain('New password');
    expect((await signin(user.email, 'chosen by the operator')).status).toBe(200);
  });

  it('refuses a password against the policy, an unknown email and a malformed command, changing nothing', async () => {
    const user = await h.createUser();
    const short = await admin(['reset-password', user.email, '--password-stdin'], 'too short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toBe('admin: the password must be at least 12 characters\n');
    const own = await admin(['reset-password', user.email, '--password-stdin'], user.email);
    expect(own.code).toBe(1);
    expect(own.stderr).toContain("must not be the account's email");
    expect((await signin(user.email, user.password)).status).toBe(200);

    const unknown = await admin(['reset-password', 'nobody@example.test']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('admin: no account has the email nobody@example.test\n');
    expect(unknown.stdout).toBe('');

    for (const args of [[], ['reset-password'], ['drop-everything', user.email], ['reset-password', user.email, '--force'], ['reset-password', 'not-an-email']]) {
      const bad = await admin(args);
      expect(bad.code, args.join(' ')).toBe(1);
      expect(bad.stderr, args.join(' ')).toMatch(/^admin: /);
    }
  });

  it('says so when PostgreSQL cannot be reached, without the URL password', async () => {
    const run = await new Promise<Run>((resolve) => {
      const child = spawn(process.execPath, ['control-plane/dist/admin-main.js', 'reset-password', 'a@example.test'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/gateway' },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', (code) => resolve({ code, stdout: '', stderr }));
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^admin: PostgreSQL is unreachable/);
    expect(run.stderr).not.toContain('hunter2');
  });
});

describe('npm run admin -- create-admin', () => {
  it('creates an account admin once', async () => {
    const run = await admin(['create-admin', 'second-admin@example.test']);
    expect(run.code).toBe(0);
    const password = /New password \(shown once\): (\S+)\n/.exec(run.stdout)?.[1] as string;
    const signedIn = await signin('second-admin@example.test', password);
    expect(signedIn.status).toBe(200);
    expect((await h.api('GET', '/v1/users/me', { token: signedIn.body.access_token })).body.role).toBe('admin');
    const [event] = await h.sql`select actor, user_agent from audit_events where type = 'user.created' and actor is null`;
    expect(event).toEqual({ actor: null, user_agent: 'local-admin (npm run admin -- create-admin)' });

    const again = await admin(['create-admin', 'Second-Admin@example.test']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists; use reset-password');
  });
});

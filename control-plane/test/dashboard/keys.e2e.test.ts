import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type Proxy } from '../../../proxy/src/proxy.js';
import { TEST_REDIS_URL } from '../../../test-support/databases.js';
import { eventually, ROOT } from '../../../test-support/processes.js';
import { startWriter, type Writer } from '../../src/writer/start-writer.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectNoSidewaysScroll, expectWithinViewport, focused, launch, openPage, shot, signIn, VIEWPORTS, type InPage, type Viewport } from './projects-keys-support.js';
import { freePort } from '../../../test-support/services.js';

/**
 * The API keys page in a real Chromium, at 1440×900 and 390×844, against a real control plane,
 * proxy and writer: keys created with each kind of expiry; the one-time secret with its copy
 * button on screen, a close that asks first, and client examples that work when pasted (the
 * curl, Node OpenAI and Anthropic ones are run against the proxy); per-key usage over 24 hours
 * and 30 days, last use, expired and soon-expiring keys marked, deleted keys in a folded history;
 * and each role's controls.
 */
const run = promisify(execFile);
let h: Harness;
let proxy: Proxy;
let writer: Writer;
let browser: Browser;

beforeAll(async () => {
  // The control plane serves the proxy's address to the dashboard's examples, so it is chosen first.
  const proxyPort = await freePort();
  h = await startHarness('dash-keys', { env: { PUBLIC_GATEWAY_URL: `http://127.0.0.1:${proxyPort}` } });
  const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...shared, PROXY_PORT: String(proxyPort), METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', DRAIN_TIMEOUT_MS: '1000', PROXY_WORKERS: '1' });
  writer = await startWriter({ ...shared, DATABASE_URL: h.db.url, WRITER_PORT: '0' });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await proxy?.drain();
  await writer?.close();
  await h?.close();
});

async function createProject(name: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name, ...body } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function createKey(projectId: string, name: string, expiresAt: string | null = null, token = h.adminToken): Promise<{ id: string; key: string }> {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token, body: { name, expires_at: expiresAt } });
  expect(res.status).toBe(201);
  return res.body;
}

async function keysOf(projectId: string): Promise<{ id: string; name: string; expires_at: string | null; deleted_at: string | null }[]> {
  return (await h.api('GET', `/v1/projects/${projectId}/keys?include_deleted=true`, { token: h.adminToken })).body.data;
}

function chat(apiKey: string, model: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Count my tokens.' }] }),
  });
}

const row = (page: Page, name: string) => page.getByRole('region', { name: /Keys of/ }).getByRole('row', { name: new RegExp(`^${name}\\b`) });

describe.each(VIEWPORTS)('at $label ($width×$height)', (viewport: Viewport) => {
  it('creates keys that expire after a preset, on a date or never, and shows the secret once with working examples', { timeout: 120_000 }, async () => {
    const projectId = await createProject(`Keys ${viewport.label}`, { allowed_models: ['mock-1-mini'] });
    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, `/keys?project=${projectId}`, ADMIN_EMAIL, ADMIN_PASSWORD);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('API keys');

    // A preset: 30 days from now, said in the hint before anything is created.
    await page.getByLabel('Key name').fill('svc-30d');
    expect(await page.getByLabel('Expires').inputValue()).toBe('90');
    await page.getByLabel('Expires').selectOption('30');
    expect(await page.locator('#new-key-expiry-hint').textContent()).toMatch(/^Stops working at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.$/);
    const before = Date.now();
    await page.getByRole('button', { name: 'Create key' }).click();

    const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('button:Copy key');
    const secret = await dialog.getByLabel('API key “svc-30d”').inputValue();
    expect(secret).toMatch(/^gw_[A-Za-z0-9_-]{40,}$/);
    // The copy button is wholly on screen, at 390 px too.
    const copy = dialog.getByRole('button', { name: 'Copy key' });
    await expectWithinViewport(page, copy, 'Copy key');
    await copy.click();
    await expect.poll(() => dialog.getByRole('status').first().textContent()).toContain('Copied to the clipboard.');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(secret);
    await expectNoSidewaysScroll(page, 'new key dialog');

    // Escape asks first; Escape on the question goes back to the key; so does ✕ and "Back".
    const question = dialog.getByRole('alert').filter({ hasText: 'You will not see this key again.' });
    await page.keyboard.press('Escape');
    await expect.poll(() => question.isVisible()).toBe(true);
    expect(await dialog.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('button:Back to the key');
    await page.keyboard.press('Escape');
    await expect.poll(() => question.count()).toBe(0);
    expect(await dialog.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('button:Copy key');
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await expect.poll(() => question.isVisible()).toBe(true);
    await expectWithinViewport(page, question.getByRole('button', { name: 'Close, the key is stored' }), 'the confirming close');
    await question.getByRole('button', { name: 'Back to the key' }).click();
    await expect.poll(() => question.count()).toBe(0);

    // The examples carry the gateway's address and the model the project allows, and work as pasted.
    const panel = dialog.getByRole('tabpanel');
    const curl = await panel.locator('[data-snippet="curl"]').textContent();
    expect(curl).toContain(`http://127.0.0.1:${proxy.port}/v1/chat/completions`);
    expect(curl).toContain('"model":"mock-1-mini"');
    const env = { ...process.env, GATEWAY_API_KEY: secret };
    const curlOut = await run('sh', ['-c', `${curl} -s -w '\\n%{http_code}'`], { env });
    expect(curlOut.stdout.trim().split('\n').pop()).toBe('200');
    expect(JSON.parse(curlOut.stdout.trim().split('\n').slice(0, -1).join('\n')).model).toBe('mock-1-mini');
    for (const [tab, id] of [
      ['Node · OpenAI', 'node'],
      ['Node · Anthropic', 'anthropic'],
    ] as const) {
      await dialog.getByRole('tab', { name: tab }).click();
      const code = (await panel.locator(`[data-snippet="${id}"]`).textContent()) ?? '';
      const out = await run(process.execPath, ['--input-type=module', '-e', code], { env, cwd: ROOT });
      expect(out.stdout.trim().length, `${tab} printed the reply`).toBeGreaterThan(0);
    }
    // The tabs follow the keyboard pattern: arrows move between them.
    await dialog.getByRole('tab', { name: 'Node · Anthropic' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => focused(page)).toBe('button:curl');
    expect(await dialog.getByRole('tab', { name: 'curl' }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => dialog.getByRole('tab', { name: 'Python · OpenAI' }).getAttribute('aria-selected')).toBe('true');
    expect(await panel.locator('[data-snippet="python"]').textContent()).toContain(`base_url="http://127.0.0.1:${proxy.port}/v1"`);
    await expectWithinViewport(page, panel.getByRole('button', { name: 'Copy example' }), 'Copy example');
    await expectNoSidewaysScroll(page, 'examples');
    await dialog.getByRole('tab', { name: 'curl' }).click();

    // The picture shows a stand-in, never a real key.
    await dialog.getByLabel('API key “svc-30d”').evaluate((field) => void ((field as unknown as { value: string }).value = `gw_${'•'.repeat(43)}`));
    await shot(page, `keys-new-secret-${viewport.label}`, { fullPage: false });
    if (viewport.label === 'wide') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'keys-new-secret-dark', { fullPage: false });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await question.getByRole('button', { name: 'Close, the key is stored' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await page.content()).not.toContain(secret);

    const thirty = (await keysOf(projectId)).find((k) => k.name === 'svc-30d')!;
    const expires = new Date(thirty.expires_at!).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);

    // A date of one's own: the key works through that day (the browser runs in UTC here).
    const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('Key name').fill('svc-date');
    await page.getByLabel('Expires').selectOption('custom');
    await page.getByLabel('Last day').fill(day);
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'I have stored the key' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await keysOf(projectId)).find((k) => k.name === 'svc-date')?.expires_at).toBe(`${day}T23:59:59.999Z`);

    // Never.
    await page.getByLabel('Key name').fill('svc-never');
    await page.getByLabel('Expires').selectOption('never');
    expect(await page.locator('#new-key-expiry-hint').textContent()).toBe('The key works until it is deleted.');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'I have stored the key' }).click();
    expect((await keysOf(projectId)).find((k) => k.name === 'svc-never')?.expires_at).toBeNull();
    await expect.poll(() => row(page, 'svc-never').textContent()).toContain('never');
    expect(await row(page, 'svc-date').textContent()).toContain(`${day} 23:59:59`);
    await expectNoSidewaysScroll(page, 'keys table');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows each key's usage and last use, marks expired and expiring keys, and keeps deleted ones in a history", { timeout: 120_000 }, async () => {
    const projectId = await createProject(`Usage ${viewport.label}`);
    const busy = await createKey(projectId, 'busy');
    await createKey(projectId, 'idle');
    await createKey(projectId, 'expiring', new Date(Date.now() + 3 * 86_400_000 + 3_600_000).toISOString());
    const shortExpiry = new Date(Date.now() + 1_500).toISOString();
    const short = await createKey(projectId, 'short-lived', shortExpiry);
    for (let i = 0; i < 3; i++) {
      const res = await chat(busy.key, 'mock-1');
      expect(res.status).toBe(200);
      await res.text();
    }
    // The writer lands the records, and with them the key's last use.
    const sums = await eventually(async () => {
      const res = await h.api('GET', `/v1/usage/summary?project_id=${projectId}&group_by=key`, { token: h.adminToken });
      const entry = res.body.data.find((d: { key: string }) => d.key === busy.id);
      return entry?.requests === 3 ? (entry as { tokens: { total: number } }) : null;
    }, 'three usage records of the busy key', 20_000);
    // Waiting out the short key's life, then the gateway refuses it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, new Date(shortExpiry).getTime() - Date.now() + 100)));
    const refused = await chat(short.key, 'mock-1');
    await refused.text();
    expect(refused.status).toBe(401);

    // A quota the traffic so far has used more than 80 % of: the page says so, in words.
    const quota = Math.ceil(sums.tokens.total * 1.1);
    expect((await h.api('PATCH', `/v1/projects/${projectId}`, { token: h.adminToken, body: { quota_tokens: quota } })).status).toBe(200);

    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, `/keys?project=${projectId}`, ADMIN_EMAIL, ADMIN_PASSWORD);
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'is near its quota' }).textContent())
      .toContain(`“Usage ${viewport.label}” is near its quota: ${sums.tokens.total.toLocaleString('en-US')} of ${quota.toLocaleString('en-US')} tokens`);
    const busyRow = row(page, 'busy');
    const tokens = sums.tokens.total.toLocaleString('en-US');
    await expect.poll(() => busyRow.textContent()).toContain(`${tokens} tokens3 requests${tokens} tokens3 requests`);
    await expect.poll(() => busyRow.textContent()).toContain('just now');
    expect(await row(page, 'idle').textContent()).toContain('neverno requestsno requests');
    expect(await row(page, 'expiring').textContent()).toContain('⚠ Expires in 4 days');
    expect(await row(page, 'short-lived').textContent()).toMatch(/✕ Expired (just now|\d+ min ago)/);
    expect(await page.getByRole('status').filter({ hasText: '1 key has expired' }).textContent()).toContain('the gateway refuses it with 401');

    // Deleting a key moves it to the folded history.
    await page.getByRole('button', { name: 'Delete key idle' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete key “idle”?' });
    await confirm.getByRole('button', { name: 'Delete key' }).click();
    await expect.poll(() => row(page, 'idle').count()).toBe(0);
    const history = page.locator('details.key-history');
    await expect.poll(() => history.locator('summary').textContent()).toBe('Deleted keys (1)');
    expect(await history.getByRole('region', { name: 'Deleted keys' }).isVisible()).toBe(false);
    await history.locator('summary').click();
    const deletedRow = history.getByRole('row', { name: /^idle/ });
    await expect.poll(() => deletedRow.isVisible()).toBe(true);
    const deletedAt = (await keysOf(projectId)).find((k) => k.name === 'idle')?.deleted_at;
    expect(deletedAt).toBeTruthy();
    expect(await deletedRow.textContent()).toContain(`✕ ${deletedAt!.slice(0, 10)} ${deletedAt!.slice(11, 19)}`);
    await expectNoSidewaysScroll(page, 'keys with history');
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await shot(page, `keys-${viewport.label}`);
    if (viewport.label === 'wide') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'keys-dark');
      await page.emulateMedia({ colorScheme: 'light' });
    }
    expect(problems).toEqual([]);
    await context.close();
  });

  it('offers members creation and the deletion of their own keys, and viewers neither', { timeout: 90_000 }, async () => {
    const projectId = await createProject(`Roles ${viewport.label}`);
    await createKey(projectId, 'admins-key');
    const member = await h.createUser('member');
    const viewer = await h.createUser('member');
    for (const [user, role] of [
      [member, 'member'],
      [viewer, 'viewer'],
    ] as const) {
      expect((await h.api('POST', `/v1/projects/${projectId}/members`, { token: h.adminToken, body: { user_id: user.id, role } })).status).toBe(201);
    }

    const asMember = await openPage(browser, h.base, viewport);
    await signIn(asMember.page, h.base, `/keys?project=${projectId}`, member.email, member.password);
    await expect.poll(() => row(asMember.page, 'admins-key').isVisible()).toBe(true);
    await expect.poll(() => asMember.page.getByRole('heading', { name: 'Create a key' }).isVisible()).toBe(true);
    expect(await row(asMember.page, 'admins-key').getByRole('button', { name: /Delete/ }).count()).toBe(0);
    await asMember.page.getByLabel('Key name').fill('members-key');
    await asMember.page.getByRole('button', { name: 'Create key' }).click();
    await asMember.page.getByRole('dialog', { name: 'Copy your new API key' }).getByRole('button', { name: 'I have stored the key' }).click();
    await expect.poll(() => row(asMember.page, 'members-key').getByRole('button', { name: 'Delete key members-key' }).isVisible()).toBe(true);
    await expectNoSidewaysScroll(asMember.page, 'member');
    expect(asMember.problems).toEqual([]);
    await asMember.context.close();

    const asViewer = await openPage(browser, h.base, viewport);
    await signIn(asViewer.page, h.base, `/keys?project=${projectId}`, viewer.email, viewer.password);
    await expect.poll(() => row(asViewer.page, 'members-key').isVisible()).toBe(true);
    await expect.poll(() => asViewer.page.getByText('You are a viewer of this project: you can read its keys.').isVisible()).toBe(true);
    expect(await asViewer.page.getByRole('heading', { name: 'Create a key' }).count()).toBe(0);
    expect(await asViewer.page.getByRole('button', { name: /Delete key/ }).count()).toBe(0);
    await expectNoSidewaysScroll(asViewer.page, 'viewer');
    expect(asViewer.problems).toEqual([]);
    await asViewer.context.close();
  });
});

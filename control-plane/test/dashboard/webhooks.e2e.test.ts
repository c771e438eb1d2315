import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, ROOT } from '../../../test-support/processes.js';
import * as types from '../../dashboard/src/api/types.js';
import { WEBHOOK_SCHEMAS } from '../../src/http/webhook-schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { signatureValid, startReceiver, startWebhookWriter, type Receiver, type TestWriter } from '../webhook-fixtures.js';

/**
 * The Webhooks page end to end, in a real headless Chromium against a real control plane and a
 * writer (whose webhook worker makes the deliveries) on their own database and Redis prefix, with
 * a real HTTP endpoint on 127.0.0.1 (hence WEBHOOK_ALLOW_PRIVATE). Retries are shortened to 50 ms,
 * three attempts, so a failing endpoint settles at once.
 *
 * The screenshot is taken on each run; with UPDATE_SCREENSHOTS=1 it replaces the one in
 * docs/screenshots, otherwise it goes to a temporary folder (as dashboard.e2e.test.ts does).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(tmpdir(), 'gateway-dashboard-screenshots');
const WIDE = { width: 1440, height: 900 };
const NARROW = { width: 390, height: 844 };

/** The browser globals the in-page checks read (this file is type-checked without the DOM library). */
interface InPage {
  document: {
    activeElement: { tagName: string; textContent: string | null; id: string; getAttribute(name: string): string | null } | null;
    cookie: string;
    documentElement: { scrollWidth: number };
    querySelector(selector: string): { style: { setProperty(name: string, value: string): void } } | null;
    querySelectorAll(selector: string): ArrayLike<{ scrollWidth: number; clientWidth: number }>;
  };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  navigator: { clipboard: { readText(): Promise<string> } };
  innerWidth: number;
}

let h: Harness;
let receiver: Receiver;
let writer: TestWriter;
let browser: Browser | undefined;
let projectId: string;
let viewer: { id: string; email: string; password: string };

beforeAll(async () => {
  h = await startHarness('dashhooks', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await startReceiver();
  writer = await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, {
    webhooks: { retryDelaysMs: [50, 50], timeoutMs: 5_000, sweepIntervalMs: 3_600_000, failedRequestsWindowMs: 3_600_000 },
  });
  const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'Billing service' } });
  expect(project.status, project.text).toBe(201);
  projectId = project.body.id;
  viewer = await h.createUser('member');
  const added = await h.api('POST', `/v1/projects/${projectId}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } });
  expect(added.status, added.text).toBe(201);
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await writer?.close();
  await receiver?.close();
  await h?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(150);
  // Confirmations of earlier steps would cover the page; hidden through the DOM (the content
  // security policy refuses injected styles).
  const hideToasts = (hidden: boolean) =>
    page.evaluate((hidden) => (globalThis as unknown as InPage).document.querySelector('.toasts')?.style.setProperty('visibility', hidden ? 'hidden' : ''), hidden);
  await hideToasts(true);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  await hideToasts(false);
}

function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = (globalThis as unknown as InPage).document.activeElement;
    return el === null ? 'none' : `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.id}`;
  });
}

async function storageContents(page: Page): Promise<string> {
  return page.evaluate(() => {
    const { localStorage, sessionStorage, document } = globalThis as unknown as InPage;
    return JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie });
  });
}

/** Neither the page nor any table frame scrolls sideways. */
function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    if (document.documentElement.scrollWidth > innerWidth) return true;
    return Array.from(document.querySelectorAll('.table-scroll')).some((frame) => frame.scrollWidth > frame.clientWidth);
  });
}

/** Clicks `button` until `target` shows up: the writer makes the deliveries a moment later. */
async function refreshUntilVisible(button: Locator, target: Locator, what: string): Promise<void> {
  await eventually(async () => {
    if (await target.first().isVisible()) return true;
    await button.click();
    await button.page().waitForTimeout(200);
    return target.first().isVisible();
  }, what, 20_000);
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 10_000 }).toBe(true);
}

async function createKey(name: string): Promise<void> {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } });
  expect(res.status, res.text).toBe(201);
}

/** Reads the one-time secret dialog: focus on Copy, the warning, a working copy; then closes it. */
async function readSecretOnce(page: Page): Promise<string> {
  const dialog = page.getByRole('dialog', { name: "Copy the webhook's signing secret" });
  await expect.poll(() => dialog.isVisible()).toBe(true);
  expect(await focused(page)).toBe('button:Copy secret');
  expect(await dialog.textContent()).toContain('This is the only time this secret is shown.');
  const secret = await dialog.getByLabel('Signing secret').inputValue();
  await dialog.getByRole('button', { name: 'Copy secret' }).click();
  await expect.poll(() => dialog.getByRole('status').textContent()).toContain('Copied to the clipboard.');
  expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(secret);
  await dialog.getByRole('button', { name: 'I have stored the secret' }).click();
  await expect.poll(() => dialog.isVisible()).toBe(false);
  expect(await focused(page)).toBe('button:Create webhook');
  // Gone from the page and never stored.
  expect(await page.content()).not.toContain(secret);
  expect(await storageContents(page)).not.toContain(secret);
  return secret;
}

it("offers the server's event types and delivery states", () => {
  expect([...types.WEBHOOK_EVENT_TYPES]).toEqual([...WEBHOOK_EVENT_TYPES]);
  const delivery = WEBHOOK_SCHEMAS.find((s) => s.$id === 'WebhookDelivery');
  expect([...types.DELIVERY_STATUSES]).toEqual([...(delivery?.properties as { status: { enum: readonly string[] } }).status.enum]);
});

it('creates a webhook, shows its secret once, logs its deliveries, disables and deletes it; a viewer only reads', { timeout: 180_000 }, async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context: BrowserContext = await browser.newContext({ viewport: WIDE, locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of (401|403|404)/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });

  await page.goto(`${h.base}/`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Projects');

  // Reached through the main navigation, right after API keys.
  const nav = page.getByRole('navigation', { name: 'Main' });
  expect(await nav.getByRole('link').allTextContents()).toEqual(['Projects', 'API keys', 'Webhooks', 'Usage', 'Audit', 'Members', 'Accounts']);
  await nav.getByRole('link', { name: 'Webhooks' }).click();
  await expect.poll(() => focused(page)).toBe('h1:Webhooks');
  expect(await page.title()).toBe('Webhooks · Model gateway');
  await expect.poll(() => new URL(page.url()).searchParams.get('project')).toBe(projectId);
  await expect.poll(() => page.getByText('This project has no webhooks.').isVisible()).toBe(true);

  // Problems are found before the API is asked, tied to their fields, and focus goes to the first.
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const urlField = page.getByLabel('Endpoint URL');
  await expect.poll(() => urlField.getAttribute('aria-invalid')).toBe('true');
  expect(await focused(page)).toBe('input:new-webhook-url');
  expect(await page.getByRole('alert').filter({ hasText: 'Enter a full http or https address' }).count()).toBe(1);
  expect(await page.getByRole('alert').filter({ hasText: 'Choose at least one event.' }).count()).toBe(1);

  // A webhook with a secret the gateway generates, for key.created only.
  await urlField.fill(`${receiver.base}/hooks`);
  await page.getByRole('checkbox', { name: 'key.created' }).check();
  await page.getByRole('button', { name: 'Create webhook' }).click();
  const secret = await readSecretOnce(page);
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
  const list = page.getByRole('region', { name: /^Webhooks of/ });
  const hooksRow = list.getByRole('row', { name: `${receiver.base}/hooks` });
  await expect.poll(() => hooksRow.textContent()).toContain('● enabled');
  expect(await hooksRow.textContent()).toContain('key.created');
  expect(await hooksRow.textContent()).not.toContain('key.deleted');

  // A second one with a secret of our own, to an endpoint that answers 410 Gone.
  receiver.answer('/gone', 410);
  const ownSecret = `whsec_${randomBytes(32).toString('base64')}`;
  await urlField.fill(`${receiver.base}/gone`);
  await page.getByRole('checkbox', { name: 'key.created' }).check();
  await page.getByLabel('Signing secret (optional)').fill('not-a-secret');
  await page.getByRole('button', { name: 'Create webhook' }).click();
  await expect.poll(() => page.getByRole('alert').filter({ hasText: 'A secret of your own starts with whsec_' }).count()).toBe(1);
  expect(await focused(page)).toBe('input:new-webhook-secret');
  await page.getByLabel('Signing secret (optional)').fill(ownSecret);
  await page.getByRole('button', { name: 'Create webhook' }).click();
  expect(await readSecretOnce(page)).toBe(ownSecret);
  expect(await page.getByLabel('Signing secret (optional)').inputValue()).toBe('');
  const goneRow = list.getByRole('row', { name: `${receiver.base}/gone` });
  await expect.poll(() => goneRow.textContent()).toContain('● enabled');

  // A key created: its key.created event is delivered to /hooks, signed with the secret shown.
  await createKey('billing-prod');
  const log = page.getByRole('region', { name: `Deliveries to ${receiver.base}/hooks` });
  const refreshLog = page.getByRole('button', { name: 'Refresh deliveries' });
  await refreshUntilVisible(refreshLog, log.getByRole('row').filter({ hasText: '✓ delivered' }), 'the delivery in the log');
  const delivered = log.getByRole('row').filter({ hasText: '✓ delivered' });
  expect(await delivered.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['1', '200', '—']));
  expect(await delivered.textContent()).toContain('key.created');
  const received = receiver.at('/hooks');
  expect(received).toHaveLength(1);
  expect(signatureValid(secret, received[0]!)).toBe(true);
  expect(await delivered.textContent()).toContain(String(received[0]!.headers['webhook-id']));

  // /gone answered 410 to the same event, so the gateway disabled it: the next event is not sent there.
  await eventually(async () => {
    const res = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
    return res.body.data.some((w: { url: string; enabled: boolean }) => w.url === `${receiver.base}/gone` && !w.enabled);
  }, 'the 410 endpoint disabled', 20_000);

  // The endpoint breaks: the next event fails after every attempt, marked as the audit page marks failures.
  receiver.answer('/hooks', 503);
  await createKey('billing-staging');
  await refreshUntilVisible(refreshLog, log.locator('tr.row-failed'), 'the failed delivery in the log');
  const failed = log.locator('tr.row-failed');
  expect(await failed.textContent()).toContain('✕ failed');
  expect(await failed.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['3', '503', 'HTTP 503']));
  expect(await log.getByRole('row').count()).toBe(3);
  expect(await page.getByText('1 failed on this page').count()).toBe(1);
  expect(await log.getByRole('navigation', { name: 'Delivery pages' }).textContent()).toContain('Page 1 · records 1–2');

  // The status filter.
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await expect.poll(() => log.getByRole('row').count()).toBe(2);
  expect(await log.locator('tr.row-failed').count()).toBe(1);
  await page.getByLabel('Status', { exact: true }).selectOption('pending');
  await expect.poll(() => page.getByText('No pending deliveries.').isVisible()).toBe(true);
  await page.getByLabel('Status', { exact: true }).selectOption('');
  await expect.poll(() => log.getByRole('row').count()).toBe(3);

  // The gateway disabled /gone at its 410; its log is one click away, and focus follows.
  const refreshList = page.getByRole('button', { name: 'Refresh', exact: true });
  await refreshUntilVisible(refreshList, goneRow.filter({ hasText: 'disabled' }), 'the webhook disabled by the gateway');
  expect(await goneRow.textContent()).toContain('By the gateway: The endpoint answered 410 Gone.');
  await page.getByRole('button', { name: `Deliveries of ${receiver.base}/gone` }).click();
  await expect.poll(() => focused(page)).toBe(`h2:Deliveries to ${receiver.base}/gone`);
  expect(new URL(page.url()).searchParams.get('webhook')).not.toBeNull();
  expect(await page.getByRole('button', { name: `Deliveries of ${receiver.base}/gone` }).getAttribute('aria-pressed')).toBe('true');
  const goneLog = page.getByRole('region', { name: `Deliveries to ${receiver.base}/gone` });
  await expect.poll(() => goneLog.getByRole('row').count()).toBe(2);
  expect(await goneLog.locator('tr.row-failed').getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['✕ failed', '1', '410', 'HTTP 410']));

  // Back to /hooks for the picture: both states in the list, a delivered and a failed delivery in the log.
  await page.getByRole('button', { name: `Deliveries of ${receiver.base}/hooks` }).click();
  await expect.poll(() => focused(page)).toBe(`h2:Deliveries to ${receiver.base}/hooks`);
  await expect.poll(() => log.getByRole('row').count()).toBe(3);
  await shot(page, 'webhooks');
  expect(await scrollsSideways(page)).toBe(false);

  // Disable by hand: the state and the button change, focus stays on it, the API agrees.
  const toggle = page.getByRole('button', { name: `Disable webhook ${receiver.base}/hooks` });
  await toggle.click();
  await expect.poll(() => hooksRow.textContent()).toContain('○ disabled');
  expect(await hooksRow.textContent()).toContain('Disabled by hand.');
  await expect.poll(() => focused(page)).toBe('button:Enable webhook ' + `${receiver.base}/hooks`);
  await expect.poll(() => page.locator('.toasts').textContent()).toContain('disabled; its pending deliveries ended.');
  const listed = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
  expect(listed.body.data.find((w: { url: string }) => w.url === `${receiver.base}/hooks`)?.enabled).toBe(false);

  // Delete, after a confirmation that starts on Cancel.
  await page.getByRole('button', { name: `Delete webhook ${receiver.base}/hooks` }).click();
  const confirm = page.getByRole('alertdialog', { name: 'Delete this webhook?' });
  await expect.poll(() => confirm.isVisible()).toBe(true);
  expect(await focused(page)).toBe('button:Cancel');
  expect(await confirm.textContent()).toContain(`${receiver.base}/hooks`);
  await confirm.getByRole('button', { name: 'Delete webhook' }).click();
  await expect.poll(() => confirm.isVisible()).toBe(false);
  await expect.poll(() => hooksRow.count()).toBe(0);
  expect(await focused(page)).toBe('h1:Webhooks');
  await expect.poll(() => page.locator('.toasts').textContent()).toContain(`Webhook to ${receiver.base}/hooks deleted.`);
  const after = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
  expect(after.body.data.map((w: { url: string }) => w.url)).toEqual([`${receiver.base}/gone`]);
  // The log shown now is the remaining webhook's.
  await expect.poll(() => goneLog.first().isVisible()).toBe(true);

  // A viewer reads the webhooks and their log, without the controls the API would refuse.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
  await page.goto(`${h.base}/webhooks?project=${projectId}`);
  await signIn(page, viewer.email, viewer.password);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhooks');
  await expect.poll(() => page.getByText('You are a viewer of this project.').isVisible()).toBe(true);
  await expect.poll(() => goneRow.isVisible()).toBe(true);
  await expect.poll(() => goneLog.locator('tr.row-failed').count()).toBe(1);
  expect(await page.getByRole('button', { name: 'Create webhook' }).count()).toBe(0);
  expect(await page.getByLabel('Endpoint URL').count()).toBe(0);
  expect(await page.getByRole('button', { name: /^(Enable|Disable|Delete) webhook/ }).count()).toBe(0);
  expect(await page.getByRole('button', { name: `Deliveries of ${receiver.base}/gone` }).count()).toBe(1);

  // A phone-sized screen: nothing scrolls sideways but the table frames.
  await page.setViewportSize(NARROW);
  expect(await page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return document.documentElement.scrollWidth <= innerWidth;
  })).toBe(true);

  expect(problems).toEqual([]);
  await context.close();
});

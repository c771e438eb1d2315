import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeRecordBatch, newRecordId, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys } from '@gateway/shared';
import { startProxy, type Proxy } from '../../../proxy/src/proxy.js';
import { TEST_REDIS_URL } from '../../../test-support/databases.js';
import { eventually, ROOT } from '../../../test-support/processes.js';
import { startWriter, type Writer } from '../../src/writer/start-writer.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';

/**
 * The dashboard end to end, in a real headless Chromium: sign in, create a project and a key,
 * read the key's secret once, send traffic through a real proxy with it, watch the usage record
 * and audit event arrive through the writer, delete the key and see the gateway refuse it. The
 * control plane, proxy and writer share one database and Redis prefix of their own.
 *
 * Screenshots of every page are taken on each run; with UPDATE_SCREENSHOTS=1 they replace the
 * ones in docs/screenshots, otherwise they go to a temporary folder.
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
const WIDE = { width: 1280, height: 860 };
const NARROW = { width: 390, height: 844 };

/**
 * The browser globals the in-page checks read. This file is type-checked with the server code,
 * without the DOM library, so they are declared here rather than pulled in for every file.
 */
interface InPage {
  document: {
    activeElement: { tagName: string; textContent: string | null; id: string; getAttribute(name: string): string | null } | null;
    cookie: string;
    documentElement: { scrollWidth: number };
    querySelector(selector: string): { style: { setProperty(name: string, value: string): void } } | null;
  };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  navigator: { clipboard: { readText(): Promise<string> } };
  innerWidth: number;
}

let h: Harness;
let proxy: Proxy;
let writer: Writer;
let browser: Browser | undefined;

beforeAll(async () => {
  h = await startHarness('dashboard');
  const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix, LOG_LEVEL: 'silent' };
  proxy = await startProxy({ ...shared, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', DRAIN_TIMEOUT_MS: '1000' });
  writer = await startWriter({ ...shared, DATABASE_URL: h.db.url, WRITER_PORT: '0' });
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await proxy?.drain();
  await writer?.close();
  await h?.close();
});

function chat(apiKey: string, model: string, stream = false): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say hello to the dashboard.' }] }),
  });
}

async function shot(page: Page, name: string, options: { fullPage?: boolean; toasts?: boolean } = {}): Promise<void> {
  // Let the chart and the layout settle so the picture shows the page, not a transition.
  await page.waitForTimeout(150);
  // Confirmations of earlier steps would cover the page they are not about. Hidden through the
  // DOM: an injected stylesheet would be refused by the page's content security policy.
  const hideToasts = (hidden: boolean) =>
    page.evaluate((hidden) => (globalThis as unknown as InPage).document.querySelector('.toasts')?.style.setProperty('visibility', hidden ? 'hidden' : ''), hidden);
  if (!options.toasts) await hideToasts(true);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
  if (!options.toasts) await hideToasts(false);
}

/** The element that has keyboard focus, described by role and text. */
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

/** Clicks Refresh until `target` shows up: the writer lands records a moment after the request. */
async function refreshUntilVisible(page: Page, target: Locator, what: string): Promise<void> {
  await eventually(async () => {
    if (await target.first().isVisible()) return true;
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await page.waitForTimeout(200);
    return target.first().isVisible();
  }, what, 20_000);
}

/**
 * A usage record with a price, as a proxy that knows the model's price writes it, queued for the
 * writer like any batch (the built-in mock provider of this test has no price).
 */
async function queuePricedRecord(projectId: string, keyId: string): Promise<void> {
  const keys = new RedisKeys(h.prefix);
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(keys.recordsQueue, { connection, prefix: keys.bullPrefix });
  try {
    const id = newRecordId();
    const usage = {
      id,
      request_id: `req-${id}`,
      project_id: projectId,
      key_id: keyId,
      timestamp: Date.now(),
      model: 'priced-model',
      provider: 'mock',
      tokens: { input: 40, output: 10, total: 50, cached: 30 },
      cost_usd: 0.0042,
      latency_ms: 25,
      finish_reason: 'stop' as const,
      provider_finish_reason: null,
      stream: false,
      endpoint: 'chat.completions' as const,
    };
    await queue.add(RECORD_JOB_NAME, encodeRecordBatch([usage], []), { ...RECORD_JOB_OPTIONS, jobId: id });
  } finally {
    await queue.close();
    await connection.quit();
  }
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 10_000 }).toBe(true);
}

it('signs in, manages a project and its key, shows traffic in usage and audit, and refuses a deleted key', { timeout: 180_000 }, async () => {
  // A browser that cannot start fails this test: the dashboard would go untested otherwise.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context: BrowserContext = await browser.newContext({ viewport: WIDE, locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A 401/403/404 the test provokes on purpose is logged by the browser as a failed resource.
    if (msg.type() === 'error' && !/status of (401|403|404)/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });

  // Sign-in page.
  await page.goto(`${h.base}/`);
  await expect.poll(() => page.title()).toBe('Sign in · Model gateway');
  expect(await focused(page)).toBe('input:signin-email');
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong email or password');
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await shot(page, 'signin');
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  // The token lives in memory only.
  expect(await storageContents(page)).toBe('{"local":{},"session":{},"cookie":""}');

  // Projects: create one with a quota.
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Projects');
  expect(new URL(page.url()).pathname).toBe('/projects');
  await page.getByLabel('Name', { exact: true }).fill('Billing service');
  await page.getByLabel('Token quota').fill('50,000');
  await page.getByRole('button', { name: 'Create project' }).click();
  const card = page.getByRole('article', { name: 'Billing service' });
  await expect.poll(() => card.textContent()).toContain('0 of 50,000 tokens (0%)');
  await expect.poll(() => page.locator('.toasts').textContent()).toContain('Project “Billing service” created.');
  const projectId = (await h.api('GET', '/v1/projects', { token: h.adminToken })).body.data.find((p: { name: string }) => p.name === 'Billing service').id as string;

  // A project without a quota is unlimited; deleting one asks first, starting on Cancel.
  await page.getByLabel('Name', { exact: true }).fill('Scratch');
  await page.getByRole('button', { name: 'Create project' }).click();
  const scratch = page.getByRole('article', { name: 'Scratch' });
  await expect.poll(() => scratch.textContent()).toContain('0 tokens used · unlimited');
  await page.getByRole('button', { name: 'Delete project Scratch' }).click();
  const confirmProject = page.getByRole('alertdialog', { name: 'Delete project “Scratch”?' });
  await expect.poll(() => confirmProject.isVisible()).toBe(true);
  expect(await focused(page)).toBe('input:delete-project-name');
  await confirmProject.getByLabel('Type Scratch to confirm').fill('Scratch');
  await confirmProject.getByRole('button', { name: 'Delete project' }).click();
  await expect.poll(() => scratch.count()).toBe(0);
  await expect.poll(() => page.locator('.toasts').textContent()).toContain('Project “Scratch” deleted.');

  // Editing the quota, in a dialog that takes focus and gives it back.
  const editQuota = page.getByRole('button', { name: 'Settings of Billing service' });
  await editQuota.click();
  expect(await focused(page)).toBe('input:settings-name');
  await page.getByRole('dialog').getByLabel('Tokens', { exact: true }).fill('100000');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect.poll(() => card.textContent()).toContain('0 of 100,000 tokens (0%)');
  expect(await focused(page)).toBe('button:Settings of Billing service');

  // Keys: reached through the main navigation, which moves focus to the new page's heading.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await expect.poll(() => focused(page)).toBe('h1:API keys');
  await expect.poll(() => new URL(page.url()).searchParams.get('project')).toBe(projectId);
  await expect.poll(() => page.getByRole('complementary', { name: 'Rotating a key' }).textContent()).toContain('Delete the old key');
  await page.getByLabel('Key name').fill('billing-prod');
  await page.getByRole('button', { name: 'Create key' }).click();

  // The secret, once: focus in the dialog, a warning, a working copy button.
  const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
  await expect.poll(() => dialog.isVisible()).toBe(true);
  expect(await focused(page)).toBe('button:Copy key');
  expect(await dialog.textContent()).toContain('This is the only time this key is shown.');
  const secretField = dialog.getByLabel('API key “billing-prod”');
  const secret = await secretField.inputValue();
  expect(secret).toMatch(/^gw_[A-Za-z0-9_-]{40,}$/);
  await dialog.getByRole('button', { name: 'Copy key' }).click();
  await expect.poll(() => dialog.getByRole('status').first().textContent()).toContain('Copied to the clipboard.');
  expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(secret);
  // The picture shows a stand-in, never a real key.
  await secretField.evaluate((field) => void ((field as unknown as { value: string }).value = `gw_${'•'.repeat(43)}`));
  await dialog.getByRole('button', { name: 'I have stored the key' }).click();
  await expect.poll(() => dialog.isVisible()).toBe(false);
  expect(await focused(page)).toBe('button:Create key');
  // Gone from the page and never stored.
  expect(await page.content()).not.toContain(secret);
  expect(await storageContents(page)).not.toContain(secret);
  const keyRow = page.getByRole('row', { name: /billing-prod/ });
  expect(await keyRow.textContent()).toContain(secret.slice(0, 11));

  // Traffic through the gateway with the new key: two models, one stream, one refused model.
  for (const [model, stream] of [
    ['mock-1', false],
    ['mock-1', false],
    ['mock-1', true],
    ['mock-1-mini', false],
  ] as const) {
    const res = await chat(secret, model, stream);
    expect(res.status, model).toBe(200);
    await res.text();
  }
  const refused = await chat(secret, 'no-such-model');
  expect(refused.status).toBe(404);
  await refused.text();

  await page.getByRole('button', { name: 'Refresh', exact: true }).click();

  // Usage: the records arrive, with totals and a chart for the range.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
  await expect.poll(() => focused(page)).toBe('h1:Usage');
  const recordsRegion = page.getByRole('region', { name: 'Records' });
  await refreshUntilVisible(page, recordsRegion.getByRole('cell', { name: 'mock-1-mini', exact: true }), 'usage records in the table');
  await expect.poll(() => recordsRegion.getByRole('row').count(), { timeout: 15_000 }).toBe(5);
  expect(await recordsRegion.getByRole('row').nth(1).textContent()).toContain('billing-prod');
  await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests4');
  expect(await page.getByRole('img', { name: /Total tokens per 5 minutes for 2 models; mock-1 used the most/ }).count()).toBe(1);
  expect(await page.locator('.chart canvas').count()).toBe(1);
  expect(await page.getByRole('region', { name: 'By model' }).textContent()).toContain('mock-1-mini');

  // Filters narrow the table and the totals alike.
  await page.getByLabel('Model', { exact: true }).selectOption('mock-1-mini');
  await page.getByLabel('Finish reason').selectOption('stop');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect.poll(() => recordsRegion.getByRole('row').count()).toBe(2);
  await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests1');
  await page.getByRole('button', { name: 'Reset filters' }).click();
  await expect.poll(() => recordsRegion.getByRole('row').count()).toBe(5);
  await page.getByLabel('Key', { exact: true }).selectOption({ label: `billing-prod (${secret.slice(0, 11)}…)` });
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect.poll(() => recordsRegion.getByRole('row').count()).toBe(5);

  // Cost beside tokens: in the totals, per model and in the record's row.
  const keyId = (await h.api('GET', `/v1/projects/${projectId}/keys`, { token: h.adminToken })).body.data.find((k: { name: string }) => k.name === 'billing-prod').id as string;
  await queuePricedRecord(projectId, keyId);
  const pricedRow = recordsRegion.getByRole('row', { name: /priced-model/ });
  await refreshUntilVisible(page, pricedRow, 'the priced record in the table');
  expect(await pricedRow.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['priced-model', '40', '30', '10', '50', '$0.0042']));
  await expect.poll(() => recordsRegion.getByRole('row').count()).toBe(6);
  await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests5');
  expect(await page.locator('.stats').textContent()).toMatch(/Cost\$\d/);
  expect(await page.locator('.stats').textContent()).toMatch(/Cached input30(?![\d,])/);
  const byModel = page.getByRole('region', { name: 'By model' });
  expect(await byModel.getByRole('row', { name: /priced-model/ }).textContent()).toContain('$0.0042');
  expect(await byModel.getByRole('columnheader', { name: 'Cost' }).count()).toBe(1);
  await shot(page, 'usage');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click();
  await expect.poll(() => focused(page)).toBe('h1:Projects');
  await expect.poll(() => card.textContent()).toContain('of 100,000 tokens');

  // Audit: the gateway requests, the refused one marked by icon and word as well as colour.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
  await expect.poll(() => focused(page)).toBe('h1:Audit');
  const events = page.getByRole('region', { name: 'Events, newest first' });
  await refreshUntilVisible(page, events.locator('tr.row-failed', { hasText: 'gateway.request' }), 'the refused request in the audit trail');
  await expect.poll(() => events.locator('tr', { hasText: 'gateway.request' }).count()).toBe(5);
  expect(await events.locator('tr.row-failed', { hasText: 'gateway.request' }).textContent()).toMatch(/✕ error|⊘ policy blocked/);
  expect(await events.locator('tr', { hasText: 'gateway.request' }).filter({ hasText: '✓ success' }).count()).toBe(4);
  expect(await events.locator('tr', { hasText: 'key.created' }).textContent()).toContain(`${ADMIN_EMAIL} (you)`);
  expect(await page.getByText(/1 failed on this page/).count()).toBe(1);
  await page.getByLabel('Outcome').selectOption('success');
  await page.getByLabel('Type', { exact: true }).selectOption('gateway.request');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect.poll(() => events.locator('tbody tr').count()).toBe(4);
  expect(await events.locator('tr.row-failed').count()).toBe(0);
  await page.getByRole('button', { name: 'Reset filters' }).click();
  await expect.poll(() => events.locator('tr.row-failed').count()).toBe(1);
  await shot(page, 'audit');

  // Members: add a second account as a viewer (after clearing older confirmations away).
  const dismiss = page.getByRole('button', { name: 'Dismiss message' });
  while ((await dismiss.count()) > 0) await dismiss.first().click();
  const viewer = await h.createUser('member');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
  await expect.poll(() => focused(page)).toBe('h1:Members');
  await page.getByLabel('Email', { exact: true }).fill(viewer.email);
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByRole('button', { name: 'Add member' }).click();
  const viewerRow = page.getByRole('row', { name: new RegExp(viewer.email) });
  await expect.poll(() => viewerRow.textContent()).toContain('viewer');
  await expect.poll(() => page.locator('.toasts').textContent()).toContain(`${viewer.email} added as viewer.`);
  await shot(page, 'members', { toasts: true });

  // Deleting the key: a confirmation that starts on Cancel, then the gateway refuses the key.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('button', { name: 'Delete key billing-prod' }).click();
  const confirm = page.getByRole('alertdialog', { name: 'Delete key “billing-prod”?' });
  await expect.poll(() => confirm.isVisible()).toBe(true);
  expect(await focused(page)).toBe('button:Cancel');
  expect(await confirm.textContent()).toContain('refused with 401');
  await confirm.getByRole('button', { name: 'Delete key' }).click();
  await expect.poll(() => confirm.isVisible()).toBe(false);
  await expect.poll(() => page.getByText('This project has no keys.').isVisible()).toBe(true);
  await expect.poll(() => page.locator('.toasts').textContent()).toContain('Key “billing-prod” deleted.');
  // The trigger is gone with its row: focus lands on the page heading rather than nowhere.
  expect(await focused(page)).toBe('h1:API keys');
  await eventually(async () => {
    const res = await chat(secret, 'mock-1');
    const body = (await res.json()) as { error?: { code?: string } };
    return res.status === 401 && body.error?.code === 'UNAUTHORIZED';
  }, 'the deleted key refused with 401 UNAUTHORIZED', 5_000);

  // Sign out; then the viewer is shown no controls it may not use.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
  expect(await page.getByRole('status').filter({ hasText: 'You signed out.' }).count()).toBe(1);
  expect(await storageContents(page)).toBe('{"local":{},"session":{},"cookie":""}');
  await page.goto(`${h.base}/members?project=${projectId}`);
  await signIn(page, viewer.email, viewer.password);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Members');
  await expect.poll(() => page.getByText('You are a viewer of this project').count()).toBe(1);
  expect(await page.getByRole('button', { name: 'Add member' }).count()).toBe(0);

  // A phone-sized screen: everything reflows, nothing scrolls sideways but the tables.
  await page.setViewportSize(NARROW);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
  await expect.poll(() => page.getByRole('region', { name: 'Records' }).getByRole('row').count(), { timeout: 15_000 }).toBeGreaterThan(1);
  expect(await page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return document.documentElement.scrollWidth <= innerWidth;
  })).toBe(true);
  await shot(page, 'narrow-usage');

  expect(problems).toEqual([]);
  await context.close();
});

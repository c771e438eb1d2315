import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRecordBatch, newRecordId, RECORD_JOB_NAME, RECORD_JOB_OPTIONS, RedisKeys } from '@gateway/shared';
import { startProxy, type Proxy } from '../../../proxy/src/proxy.js';
import { TEST_REDIS_URL } from '../../../test-support/databases.js';
import { eventually } from '../../../test-support/processes.js';
import { startWriter, type Writer } from '../../src/writer/start-writer.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectFitsViewport, goTo, launch, openTab, SIZES, storageContents, type SizeName } from './browser.js';

/**
 * The dashboard end to end, in a real headless Chromium, at 1440×900 and at 390×844: sign in,
 * create a project and a key, read the key's secret once, send traffic through a real proxy with
 * it, watch the usage record and audit event arrive through the writer, delete the key and see
 * the gateway refuse it. At each size, every screen of the flow is checked to be no wider than
 * the window. Each size has a control plane, proxy and writer of its own, sharing one database and
 * Redis prefix, so both runs start from an empty gateway. The pages' pictures come from their own
 * tests (shell, accounts, projects, keys, usage, audit, webhooks).
 */

/**
 * The browser globals the in-page checks read. This file is type-checked with the server code,
 * without the DOM library, so they are declared here rather than pulled in for every file.
 */
interface InPage {
  document: {
    activeElement: { tagName: string; textContent: string | null; id: string; getAttribute(name: string): string | null } | null;
  };
  navigator: { clipboard: { readText(): Promise<string> } };
}

let browser: Browser;

beforeAll(async () => {
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
});

interface Gateway {
  h: Harness;
  proxy: Proxy;
  writer: Writer;
}

async function startGateway(name: string): Promise<Gateway> {
  const h = await startHarness(name);
  const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: h.prefix, LOG_LEVEL: 'silent' };
  const proxy = await startProxy({ ...shared, PROXY_PORT: '0', METRICS_PORT: '0', PROXY_HOST: '127.0.0.1', DRAIN_TIMEOUT_MS: '1000' });
  const writer = await startWriter({ ...shared, DATABASE_URL: h.db.url, WRITER_PORT: '0' });
  return { h, proxy, writer };
}

async function stopGateway(g: Gateway | undefined): Promise<void> {
  await g?.proxy.drain();
  await g?.writer.close();
  await g?.h.close();
}

function chat(proxy: Proxy, apiKey: string, model: string, stream = false): Promise<Response> {
  return fetch(`http://127.0.0.1:${proxy.port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say hello to the dashboard.' }] }),
  });
}

/** The element that has keyboard focus, described by role and text. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = (globalThis as unknown as InPage).document.activeElement;
    return el === null ? 'none' : `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.id}`;
  });
}

/**
 * Clicks Refresh until `target` shows up: the writer lands records a moment after the request (on
 * a loaded machine, many moments; a click that cannot happen yet is simply tried again).
 */
async function refreshUntil(page: Page, check: () => Promise<boolean>, what: string): Promise<void> {
  await eventually(async () => {
    if (await check()) return true;
    await page.getByRole('button', { name: 'Refresh', exact: true }).click({ timeout: 5_000 });
    await page.waitForTimeout(200);
    return check();
  }, what, 60_000);
}

async function refreshUntilVisible(page: Page, target: Locator, what: string): Promise<void> {
  await refreshUntil(page, () => target.first().isVisible(), what);
}

/**
 * A usage record with a price, as a proxy that knows the model's price writes it, queued for the
 * writer like any batch (the built-in mock provider of this test has no price).
 */
async function queuePricedRecord(h: Harness, projectId: string, keyId: string): Promise<void> {
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

/** On a phone the usage and audit filters fold behind a button: open it before using them. */
async function openFilters(page: Page): Promise<void> {
  const toggle = page.getByRole('button', { name: /^Filters/ });
  if ((await toggle.isVisible()) && (await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
}

/** The element is wholly on screen from left to right. */
async function expectOnScreen(page: Page, target: Locator, what: string): Promise<void> {
  const box = await target.boundingBox();
  const width = page.viewportSize()?.width ?? 0;
  expect(box, `${what} has no box`).not.toBeNull();
  expect(box!.x, `${what} starts off-screen`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what} ends past the right edge (${width})`).toBeLessThanOrEqual(width);
}

describe.each(Object.keys(SIZES) as SizeName[])('at the %s size', (size) => {
  let g: Gateway | undefined;

  beforeAll(async () => {
    g = await startGateway(`dashboard${size}`);
  }, 60_000);

  afterAll(async () => {
    await stopGateway(g);
  });

  it('signs in, manages a project and its key, shows traffic in usage and audit, and refuses a deleted key', { timeout: 180_000 }, async () => {
    const { h, proxy } = g!;
    const { context, page, problems } = await openTab(browser, size);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
    const fits = (what: string) => expectFitsViewport(page, `${what} at ${size}`);

    // Sign-in page.
    await page.goto(`${h.base}/`);
    await expect.poll(() => page.title()).toBe('Sign in · Model gateway');
    expect(await focused(page)).toBe('input:signin-email');
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong email or password');
    await fits('the sign-in page with its error');
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
    await fits('the projects');
    await page.getByRole('button', { name: 'Delete project Scratch' }).click();
    const confirmProject = page.getByRole('alertdialog', { name: 'Delete project “Scratch”?' });
    await expect.poll(() => confirmProject.isVisible()).toBe(true);
    expect(await focused(page)).toBe('input:delete-project-name');
    await confirmProject.getByLabel('Type Scratch to confirm').fill('Scratch');
    await fits('the delete confirmation');
    await expectOnScreen(page, confirmProject.getByRole('button', { name: 'Delete project' }), 'Delete project');
    await confirmProject.getByRole('button', { name: 'Delete project' }).click();
    await expect.poll(() => scratch.count()).toBe(0);
    await expect.poll(() => page.locator('.toasts').textContent()).toContain('Project “Scratch” deleted.');

    // Editing the quota, in a dialog that takes focus and gives it back.
    const editQuota = page.getByRole('button', { name: 'Settings of Billing service' });
    await editQuota.click();
    expect(await focused(page)).toBe('input:settings-name');
    await page.getByRole('dialog').getByLabel('Tokens', { exact: true }).fill('100000');
    await fits('the settings dialog');
    await expectOnScreen(page, page.getByRole('button', { name: 'Save settings' }), 'Save settings');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => card.textContent()).toContain('0 of 100,000 tokens (0%)');
    expect(await focused(page)).toBe('button:Settings of Billing service');

    // Keys: reached through the main navigation, which moves focus to the new page's heading.
    await goTo(page, 'API keys');
    await expect.poll(() => focused(page)).toBe('h1:API keys');
    await expect.poll(() => new URL(page.url()).searchParams.get('project')).toBe(projectId);
    await expect.poll(() => page.getByRole('complementary', { name: 'Rotating a key' }).textContent()).toContain('Delete the old key');
    await page.getByLabel('Key name').fill('billing-prod');
    await page.getByRole('button', { name: 'Create key' }).click();

    // The secret, once: focus in the dialog, a warning, a working copy button wholly on screen.
    const dialog = page.getByRole('dialog', { name: 'Copy your new API key' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await focused(page)).toBe('button:Copy key');
    expect(await dialog.textContent()).toContain('This is the only time this key is shown.');
    const secretField = dialog.getByLabel('API key “billing-prod”');
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^gw_[A-Za-z0-9_-]{40,}$/);
    await fits('the new key dialog');
    await expectOnScreen(page, dialog.getByRole('button', { name: 'Copy key' }), 'Copy key');
    await dialog.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => dialog.getByRole('status').first().textContent()).toContain('Copied to the clipboard.');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(secret);
    await dialog.getByRole('button', { name: 'I have stored the key' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await focused(page)).toBe('button:Create key');
    // Gone from the page and never stored.
    expect(await page.content()).not.toContain(secret);
    expect(await storageContents(page)).not.toContain(secret);
    const keyRow = page.getByRole('row', { name: /billing-prod/ });
    expect(await keyRow.textContent()).toContain(secret.slice(0, 11));
    await fits('the keys');

    // Traffic through the gateway with the new key: two models, one stream, one refused model.
    for (const [model, stream] of [
      ['mock-1', false],
      ['mock-1', false],
      ['mock-1', true],
      ['mock-1-mini', false],
    ] as const) {
      const res = await chat(proxy, secret, model, stream);
      expect(res.status, model).toBe(200);
      await res.text();
    }
    const refused = await chat(proxy, secret, 'no-such-model');
    expect(refused.status).toBe(404);
    await refused.text();

    await page.getByRole('button', { name: 'Refresh', exact: true }).click();

    // Usage: the records arrive, with totals and a chart for the range.
    await goTo(page, 'Usage');
    await expect.poll(() => focused(page)).toBe('h1:Usage');
    const recordsRegion = page.getByRole('region', { name: 'Records' });
    const recordRows = recordsRegion.locator('tbody tr');
    await refreshUntilVisible(page, recordRows.filter({ hasText: 'mock-1-mini' }), 'usage records in the table');
    await expect.poll(() => recordRows.count(), { timeout: 15_000 }).toBe(4);
    expect(await recordRows.first().textContent()).toContain('billing-prod');
    await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests4');
    expect(await page.getByRole('img', { name: /Total tokens per 5 minutes for 2 models; mock-1 used the most/ }).count()).toBe(1);
    expect(await page.locator('.chart canvas').count()).toBe(1);
    expect(await page.getByRole('region', { name: 'By model' }).textContent()).toContain('mock-1-mini');
    await fits('the usage page');

    // Filters narrow the table and the totals alike. The model choices are their own query, which
    // may have run before the writer landed the last record that the table's query then saw.
    await openFilters(page);
    const modelFilter = page.getByLabel('Model', { exact: true });
    await refreshUntil(page, async () => (await modelFilter.evaluate((el) => [...(el as unknown as { options: { value: string }[] }).options].map((o) => o.value))).includes('mock-1-mini'), 'mock-1-mini among the model choices');
    await modelFilter.selectOption('mock-1-mini');
    await page.getByLabel('Finish reason').selectOption('stop');
    await fits('the usage filters');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => recordRows.count()).toBe(1);
    await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests1');
    await openFilters(page);
    await page.getByRole('button', { name: 'Reset filters' }).click();
    await expect.poll(() => recordRows.count()).toBe(4);
    await openFilters(page);
    await page.getByLabel('Key', { exact: true }).selectOption({ label: `billing-prod (${secret.slice(0, 11)}…)` });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => recordRows.count()).toBe(4);

    // Cost beside tokens: in the totals, per model and in the record's row.
    const keyId = (await h.api('GET', `/v1/projects/${projectId}/keys`, { token: h.adminToken })).body.data.find((k: { name: string }) => k.name === 'billing-prod').id as string;
    await queuePricedRecord(h, projectId, keyId);
    const pricedRow = recordRows.filter({ hasText: 'priced-model' });
    await refreshUntilVisible(page, pricedRow, 'the priced record in the table');
    expect(await pricedRow.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['priced-model', '40', '30', '10', '50', '$0.0042']));
    await expect.poll(() => recordRows.count()).toBe(5);
    await expect.poll(() => page.locator('.stats').textContent()).toContain('Requests5');
    expect(await page.locator('.stats').textContent()).toMatch(/Cost\$\d/);
    expect(await page.locator('.stats').textContent()).toMatch(/Cached input30(?![\d,])/);
    const byModel = page.getByRole('region', { name: 'By model' });
    expect(await byModel.locator('tbody tr').filter({ hasText: 'priced-model' }).textContent()).toContain('$0.0042');
    expect(await byModel.getByRole('columnheader', { name: 'Cost' }).count()).toBe(1);
    await fits('the usage page with a priced record');

    await goTo(page, 'Projects');
    await expect.poll(() => focused(page)).toBe('h1:Projects');
    await expect.poll(() => card.textContent()).toContain('of 100,000 tokens');

    // Audit: the gateway requests, the refused one marked by icon and word as well as colour.
    await goTo(page, 'Audit');
    await expect.poll(() => focused(page)).toBe('h1:Audit');
    const events = page.getByRole('region', { name: 'Events, newest first' });
    await refreshUntilVisible(page, events.locator('tr.row-failed', { hasText: 'gateway.request' }), 'the refused request in the audit trail');
    await expect.poll(() => events.locator('tr', { hasText: 'gateway.request' }).count()).toBe(5);
    expect(await events.locator('tr.row-failed', { hasText: 'gateway.request' }).textContent()).toMatch(/✕ error|⊘ policy blocked/);
    expect(await events.locator('tr', { hasText: 'gateway.request' }).filter({ hasText: '✓ success' }).count()).toBe(4);
    expect(await events.locator('tr', { hasText: 'key.created' }).textContent()).toContain(`${ADMIN_EMAIL} (you)`);
    expect(await page.getByText(/1 failed on this page/).count()).toBe(1);
    await fits('the audit page');
    await openFilters(page);
    await page.getByLabel('Outcome').selectOption('success');
    await page.getByLabel('Type', { exact: true }).selectOption('gateway.request');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => events.locator('tbody tr').count()).toBe(4);
    expect(await events.locator('tr.row-failed').count()).toBe(0);
    await openFilters(page);
    await page.getByRole('button', { name: 'Reset filters' }).click();
    await expect.poll(() => events.locator('tr.row-failed').count()).toBe(1);

    // Members: add a second account as a viewer (after clearing older confirmations away).
    const dismiss = page.getByRole('button', { name: 'Dismiss message' });
    while ((await dismiss.count()) > 0) await dismiss.first().click();
    const viewer = await h.createUser('member');
    await goTo(page, 'Members');
    await expect.poll(() => focused(page)).toBe('h1:Members');
    await page.getByLabel('Email', { exact: true }).fill(viewer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Add member' }).click();
    const viewerRow = page.getByRole('row', { name: new RegExp(viewer.email) });
    await expect.poll(() => viewerRow.textContent()).toContain('viewer');
    await expect.poll(() => page.locator('.toasts').textContent()).toContain(`${viewer.email} added as viewer.`);
    await fits('the members');

    // Deleting the key: a confirmation that starts on Cancel, then the gateway refuses the key.
    await goTo(page, 'API keys');
    await page.getByRole('button', { name: 'Delete key billing-prod' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete key “billing-prod”?' });
    await expect.poll(() => confirm.isVisible()).toBe(true);
    expect(await focused(page)).toBe('button:Cancel');
    expect(await confirm.textContent()).toContain('refused with 401');
    await fits('the key deletion');
    await expectOnScreen(page, confirm.getByRole('button', { name: 'Delete key' }), 'Delete key');
    await confirm.getByRole('button', { name: 'Delete key' }).click();
    await expect.poll(() => confirm.isVisible()).toBe(false);
    await expect.poll(() => page.getByText('This project has no keys.').isVisible()).toBe(true);
    await expect.poll(() => page.locator('.toasts').textContent()).toContain('Key “billing-prod” deleted.');
    // The trigger is gone with its row: focus lands on the page heading rather than nowhere.
    expect(await focused(page)).toBe('h1:API keys');
    await eventually(async () => {
      const res = await chat(proxy, secret, 'mock-1');
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
    await fits("a viewer's members page");

    // The viewer's usage: the records, and nothing wider than the window.
    await goTo(page, 'Usage');
    await expect.poll(() => page.getByRole('region', { name: 'Records' }).locator('tbody tr').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await fits("a viewer's usage page");

    expect(problems).toEqual([]);
    await context.close();
  });
});

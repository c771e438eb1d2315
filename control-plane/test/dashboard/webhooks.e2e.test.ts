import { randomBytes } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test-support/processes.js';
import * as types from '../../dashboard/src/api/types.js';
import { WEBHOOK_SCHEMAS } from '../../src/http/webhook-schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { signatureValid, startReceiver, startWebhookWriter, type Receiver, type TestWriter } from '../webhook-fixtures.js';
import { expectFitsViewport, goTo, launch, openTab, poll, shotFor, signIn, SIZES, storageContents, type SizeName } from './browser.js';

/**
 * The Webhooks page end to end, in a real headless Chromium at 1440×900 and 390×844, against a
 * real control plane and a writer (whose webhook worker makes the deliveries) on their own
 * database and Redis prefix, with a real HTTP endpoint on 127.0.0.1 (hence WEBHOOK_ALLOW_PRIVATE).
 * Retries are shortened to 50 ms, three attempts, so a failing endpoint settles at once. Each size
 * has a project of its own, so the two runs' events and deliveries stay apart.
 *
 * The screenshots are taken on each run; with UPDATE_SCREENSHOTS=1 they replace the ones in
 * docs/screenshots, otherwise they go to a temporary folder.
 */

/** The browser globals the in-page checks read (this file is type-checked without the DOM library). */
interface InPage {
  document: {
    activeElement: { tagName: string; textContent: string | null; id: string; getAttribute(name: string): string | null } | null;
    querySelectorAll(selector: string): ArrayLike<{ scrollWidth: number; clientWidth: number }>;
  };
  navigator: { clipboard: { readText(): Promise<string> } };
}

let h: Harness;
let receiver: Receiver;
let writer: TestWriter;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashhooks', { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await startReceiver();
  writer = await startWebhookWriter(h, { WEBHOOK_ALLOW_PRIVATE: 'true' }, {
    webhooks: { retryDelaysMs: [50, 50], timeoutMs: 5_000, sweepIntervalMs: 3_600_000, failedRequestsWindowMs: 3_600_000 },
  });
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await writer?.close();
  await receiver?.close();
  await h?.close();
});

function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = (globalThis as unknown as InPage).document.activeElement;
    return el === null ? 'none' : `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.id}`;
  });
}

/** Neither the page nor any table frame in it scrolls sideways. */
async function expectNothingSideways(page: Page, what: string): Promise<void> {
  await expectFitsViewport(page, what);
  const frames = await page.evaluate(() =>
    Array.from((globalThis as unknown as InPage).document.querySelectorAll('.table-scroll')).filter((frame) => frame.scrollWidth > frame.clientWidth + 1).length,
  );
  expect(frames, `${what}: table frames scrolling sideways`).toBe(0);
}

/** The element is wholly on screen from left to right. */
async function expectOnScreen(page: Page, target: Locator, what: string): Promise<void> {
  const box = await target.boundingBox();
  const width = page.viewportSize()?.width ?? 0;
  expect(box, `${what} has no box`).not.toBeNull();
  expect(box!.x, `${what} starts off-screen`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what} ends past the right edge (${width})`).toBeLessThanOrEqual(width);
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

async function createKey(projectId: string, name: string): Promise<void> {
  const res = await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } });
  expect(res.status, res.text).toBe(201);
}

/** Reads the one-time secret dialog: focus on Copy, the warning, a working copy; then closes it. */
async function readSecretOnce(page: Page): Promise<string> {
  const dialog = page.getByRole('dialog', { name: "Copy the webhook's signing secret" });
  await poll(() => dialog.isVisible()).toBe(true);
  expect(await focused(page)).toBe('button:Copy secret');
  expect(await dialog.textContent()).toContain('This is the only time this secret is shown.');
  const secret = await dialog.getByLabel('Signing secret').inputValue();
  // The dialog fits the screen, its copy and close buttons included.
  await expectFitsViewport(page, 'the secret dialog');
  await expectOnScreen(page, dialog.getByRole('button', { name: 'Copy secret' }), 'Copy secret');
  await expectOnScreen(page, dialog.getByRole('button', { name: 'I have stored the secret' }), 'I have stored the secret');
  await dialog.getByRole('button', { name: 'Copy secret' }).click();
  await poll(() => dialog.getByRole('status').textContent()).toContain('Copied to the clipboard.');
  expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(secret);
  await dialog.getByRole('button', { name: 'I have stored the secret' }).click();
  await poll(() => dialog.isVisible()).toBe(false);
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

describe.each(Object.keys(SIZES) as SizeName[])('at the %s size', (size) => {
  it('creates a webhook, shows its secret once, logs its deliveries, disables and deletes it; a viewer only reads', { timeout: 180_000 }, async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: `Billing service (${size})` } });
    expect(project.status, project.text).toBe(201);
    const projectId: string = project.body.id;
    const viewer = await h.createUser('member');
    const added = await h.api('POST', `/v1/projects/${projectId}/members`, { token: h.adminToken, body: { user_id: viewer.id, role: 'viewer' } });
    expect(added.status, added.text).toBe(201);
    const hooksUrl = `${receiver.base}/hooks-${size}`;
    const goneUrl = `${receiver.base}/gone-${size}`;

    const { context, page, problems } = await openTab(browser, size);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
    await page.goto(`${h.base}/webhooks?project=${projectId}`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhooks');
    expect(await page.title()).toBe('Webhooks · Model gateway');
    await poll(() => page.getByText('This project has no webhooks.').isVisible()).toBe(true);
    await expectNothingSideways(page, 'no webhooks yet');

    // In the main navigation, right after API keys (shell.e2e checks the order); it moves focus to the page's heading.
    await goTo(page, 'API keys');
    await poll(() => focused(page)).toBe('h1:API keys');
    await goTo(page, 'Webhooks');
    await poll(() => focused(page)).toBe('h1:Webhooks');
    await poll(() => new URL(page.url()).searchParams.get('project')).toBe(projectId);

    // Problems are found before the API is asked, tied to their fields, and focus goes to the first.
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const urlField = page.getByLabel('Endpoint URL');
    await poll(() => urlField.getAttribute('aria-invalid')).toBe('true');
    expect(await focused(page)).toBe('input:new-webhook-url');
    expect(await page.getByRole('alert').filter({ hasText: 'Enter a full http or https address' }).count()).toBe(1);
    expect(await page.getByRole('alert').filter({ hasText: 'Choose at least one event.' }).count()).toBe(1);
    await expectNothingSideways(page, 'the form with its problems');
    // Each problem goes as its field changes.
    await page.getByRole('checkbox', { name: 'key.created' }).check();
    await poll(() => page.getByRole('alert').filter({ hasText: 'Choose at least one event.' }).count()).toBe(0);

    // What only the API finds is shown on its field too: credentials in the URL.
    await urlField.fill(`http://user:pw@127.0.0.1:9/${size}`);
    expect(await urlField.getAttribute('aria-invalid')).toBeNull();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const urlProblem = page.locator('#new-webhook-url-problem');
    await poll(() => urlProblem.textContent()).toContain('Must not carry credentials (user:password@)');
    expect(await urlProblem.getAttribute('role')).toBe('alert');
    expect(await urlField.getAttribute('aria-invalid')).toBe('true');
    expect(await urlField.getAttribute('aria-describedby')).toContain('new-webhook-url-problem');
    expect(await focused(page)).toBe('input:new-webhook-url');

    // A webhook with a secret the gateway generates, for key.created only.
    await urlField.fill(hooksUrl);
    expect(await urlProblem.count()).toBe(0);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await readSecretOnce(page);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
    const list = page.getByRole('region', { name: /^Webhooks of/ });
    const hooksRow = list.getByRole('row', { name: hooksUrl });
    await poll(() => hooksRow.textContent()).toContain('● enabled');
    expect(await hooksRow.textContent()).toContain('key.created');
    expect(await hooksRow.textContent()).not.toContain('key.deleted');

    // A second one with a secret of our own, to an endpoint that answers 410 Gone.
    receiver.answer(`/gone-${size}`, 410);
    const ownSecret = `whsec_${randomBytes(32).toString('base64')}`;
    await urlField.fill(goneUrl);
    await page.getByRole('checkbox', { name: 'key.created' }).check();
    await page.getByLabel('Signing secret (optional)').fill('not-a-secret');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await poll(() => page.getByRole('alert').filter({ hasText: 'A secret of your own starts with whsec_' }).count()).toBe(1);
    expect(await focused(page)).toBe('input:new-webhook-secret');
    await page.getByLabel('Signing secret (optional)').fill(ownSecret);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    expect(await readSecretOnce(page)).toBe(ownSecret);
    expect(await page.getByLabel('Signing secret (optional)').inputValue()).toBe('');
    const goneRow = list.getByRole('row', { name: goneUrl });
    await poll(() => goneRow.textContent()).toContain('● enabled');

    // A key created: its key.created event is delivered to the first, signed with the secret shown.
    await createKey(projectId, 'billing-prod');
    const log = page.getByRole('region', { name: `Deliveries to ${hooksUrl}` });
    const refreshLog = page.getByRole('button', { name: 'Refresh deliveries' });
    await refreshUntilVisible(refreshLog, log.getByRole('row').filter({ hasText: '✓ delivered' }), 'the delivery in the log');
    const delivered = log.getByRole('row').filter({ hasText: '✓ delivered' });
    expect(await delivered.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['1', '200', '—']));
    expect(await delivered.textContent()).toContain('key.created');
    const received = receiver.at(`/hooks-${size}`);
    expect(received).toHaveLength(1);
    expect(signatureValid(secret, received[0]!)).toBe(true);
    expect(await delivered.textContent()).toContain(String(received[0]!.headers['webhook-id']));

    // The other answered 410 to the same event, so the gateway disabled it: the next event is not sent there.
    await eventually(async () => {
      const res = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
      return res.body.data.some((w: { url: string; enabled: boolean }) => w.url === goneUrl && !w.enabled);
    }, 'the 410 endpoint disabled', 20_000);

    // The endpoint breaks: the next event fails after every attempt, marked as the audit page marks failures.
    receiver.answer(`/hooks-${size}`, 503);
    await createKey(projectId, 'billing-staging');
    await refreshUntilVisible(refreshLog, log.locator('tr.row-failed'), 'the failed delivery in the log');
    const failed = log.locator('tr.row-failed');
    expect(await failed.textContent()).toContain('✕ failed');
    expect(await failed.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['3', '503', 'HTTP 503']));
    expect(await log.getByRole('row').count()).toBe(3);
    expect(await page.getByText('1 failed on this page').count()).toBe(1);
    expect(await log.getByRole('navigation', { name: 'Delivery pages' }).textContent()).toContain('Page 1 · records 1–2');

    // The status filter.
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await poll(() => log.getByRole('row').count()).toBe(2);
    expect(await log.locator('tr.row-failed').count()).toBe(1);
    await page.getByLabel('Status', { exact: true }).selectOption('pending');
    await poll(() => page.getByText('No pending deliveries.').isVisible()).toBe(true);
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await poll(() => log.getByRole('row').count()).toBe(3);

    // The gateway disabled the other at its 410; its log is one click away, and focus follows.
    const refreshList = page.getByRole('button', { name: 'Refresh', exact: true });
    await refreshUntilVisible(refreshList, goneRow.filter({ hasText: 'disabled' }), 'the webhook disabled by the gateway');
    expect(await goneRow.textContent()).toContain('By the gateway: The endpoint answered 410 Gone.');
    await page.getByRole('button', { name: `Deliveries of ${goneUrl}` }).click();
    await poll(() => focused(page)).toBe(`h2:Deliveries to ${goneUrl}`);
    expect(new URL(page.url()).searchParams.get('webhook')).not.toBeNull();
    expect(await page.getByRole('button', { name: `Deliveries of ${goneUrl}` }).getAttribute('aria-pressed')).toBe('true');
    const goneLog = page.getByRole('region', { name: `Deliveries to ${goneUrl}` });
    await poll(() => goneLog.getByRole('row').count()).toBe(2);
    expect(await goneLog.locator('tr.row-failed').getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['✕ failed', '1', '410', 'HTTP 410']));

    // Back to the first for the picture: both states in the list, a delivered and a failed delivery in the log.
    await page.getByRole('button', { name: `Deliveries of ${hooksUrl}` }).click();
    await poll(() => focused(page)).toBe(`h2:Deliveries to ${hooksUrl}`);
    await poll(() => log.getByRole('row').count()).toBe(3);
    await expectNothingSideways(page, 'the list and the log');
    await shotFor(page, 'webhooks', size);
    await expectNothingSideways(page, 'the list and the log after the pictures');

    // Disable by hand: the state and the button change, focus stays on it, the API agrees.
    await page.getByRole('button', { name: `Disable webhook ${hooksUrl}` }).click();
    await poll(() => hooksRow.textContent()).toContain('○ disabled');
    expect(await hooksRow.textContent()).toContain('Disabled by hand.');
    await poll(() => focused(page)).toBe(`button:Enable webhook ${hooksUrl}`);
    await poll(() => page.locator('.toasts').textContent()).toContain('disabled; its pending deliveries ended.');
    const listed = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
    expect(listed.body.data.find((w: { url: string }) => w.url === hooksUrl)?.enabled).toBe(false);

    // Delete, after a confirmation that starts on Cancel and fits the screen.
    await page.getByRole('button', { name: `Delete webhook ${hooksUrl}` }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Delete this webhook?' });
    await poll(() => confirm.isVisible()).toBe(true);
    expect(await focused(page)).toBe('button:Cancel');
    expect(await confirm.textContent()).toContain(hooksUrl);
    await expectFitsViewport(page, 'the delete confirmation');
    await expectOnScreen(page, confirm.getByRole('button', { name: 'Delete webhook' }), 'Delete webhook');
    await confirm.getByRole('button', { name: 'Delete webhook' }).click();
    await poll(() => confirm.isVisible()).toBe(false);
    await poll(() => hooksRow.count()).toBe(0);
    expect(await focused(page)).toBe('h1:Webhooks');
    await poll(() => page.locator('.toasts').textContent()).toContain(`Webhook to ${hooksUrl} deleted.`);
    const after = await h.api('GET', `/v1/projects/${projectId}/webhooks`, { token: h.adminToken });
    expect(after.body.data.map((w: { url: string }) => w.url)).toEqual([goneUrl]);
    // The log shown now is the remaining webhook's.
    await poll(() => goneLog.first().isVisible()).toBe(true);

    // A viewer reads the webhooks and their log, without the controls the API would refuse.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    await page.goto(`${h.base}/webhooks?project=${projectId}`);
    await signIn(page, viewer.email, viewer.password);
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhooks');
    await poll(() => page.getByText('You are a viewer of this project.').isVisible()).toBe(true);
    await poll(() => goneRow.isVisible()).toBe(true);
    await poll(() => goneLog.locator('tr.row-failed').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Create webhook' }).count()).toBe(0);
    expect(await page.getByLabel('Endpoint URL').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Enable|Disable|Delete) webhook/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: `Deliveries of ${goneUrl}` }).count()).toBe(1);
    await expectNothingSideways(page, "a viewer's page");

    expect(problems).toEqual([]);
    await context.close();
  });
});

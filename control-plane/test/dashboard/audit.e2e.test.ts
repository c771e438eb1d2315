import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { CHROMIUM, CHROMIUM_ARGS, DAY, HOUR, insertAudit, MINUTE, PHONE, shot, sideways, signIn, visibleText, watchProblems, WIDE } from './record-pages-support.js';

/**
 * The Audit page end to end in a real headless Chromium against a real control plane and
 * PostgreSQL: events at known distances from now (beside the ones the set-up itself causes), so
 * the range presets, the type and outcome choices, the Project column, the details panel and the
 * phone's cards and full-screen sheet all have known answers.
 */
let h: Harness;
let browser: Browser | undefined;
let checkout: string;
const NOW = Date.now();
const AGENT = 'OpenAI/Python 1.55.0 (a long user agent that must wrap inside the panel rather than widen it)';

beforeAll(async () => {
  h = await startHarness('dashaudit');
  const project = async (name: string) => (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } })).body.id as string;
  checkout = await project('Checkout');
  const search = await project('Search');
  const key = async (projectId: string, name: string) => (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } })).body.id as string;
  const web = await key(checkout, 'checkout-web');
  const api = await key(search, 'search-api');
  await insertAudit(h, [
    { ts: NOW - 5 * MINUTE, project_id: checkout, type: 'gateway.request', outcome: 'success', status: 200, key_id: web, model: 'gpt-4o' },
    { ts: NOW - 6 * MINUTE, project_id: checkout, type: 'gateway.request', outcome: 'error', status: 502, key_id: web, model: 'gpt-4o', error_code: 'PROVIDER_ERROR' },
    { ts: NOW - 7 * MINUTE, project_id: null, type: 'gateway.request', outcome: 'auth_failed', status: 401, error_code: 'UNAUTHORIZED' },
    { ts: NOW - 8 * MINUTE, project_id: search, type: 'gateway.request', outcome: 'policy_blocked', status: 429, key_id: api, model: 'gpt-4o-mini', error_code: 'QUOTA_EXCEEDED', user_agent: AGENT },
    { ts: NOW - 3 * DAY, project_id: search, type: 'project.updated', outcome: 'success', status: 200, actor: h.adminId },
    { ts: NOW - 10 * DAY, project_id: checkout, type: 'key.deleted', outcome: 'success', status: 204, actor: h.adminId, key_id: web },
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function newPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport, locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce' });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page, problems: watchProblems(page) };
}

async function signInIfAsked(page: Page): Promise<void> {
  const signOut = page.getByRole('button', { name: 'Sign out' });
  const email = page.getByLabel('Email');
  await expect.poll(async () => (await signOut.isVisible()) || (await email.isVisible())).toBe(true);
  if (await email.isVisible()) await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}

const param = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);
const events = (page: Page) => page.getByRole('region', { name: 'Events, newest first' }).locator('tbody tr');
const rowsOfType = (page: Page, type: string) => events(page).filter({ hasText: type }).count();

async function apply(page: Page, choices: { range?: string; type?: string; outcome?: string }): Promise<void> {
  if (choices.range !== undefined) await page.getByLabel('Range', { exact: true }).selectOption(choices.range);
  if (choices.type !== undefined) await page.getByLabel('Type', { exact: true }).selectOption(choices.type);
  if (choices.outcome !== undefined) await page.getByLabel('Outcome', { exact: true }).selectOption(choices.outcome);
  await page.getByRole('button', { name: 'Apply filters' }).click();
}

it('filters by range, type and outcome from the address, names projects and keys, and opens an event in a side panel', { timeout: 180_000 }, async () => {
  const { context, page, problems } = await newPage(WIDE);

  // Loading shows as loading, not as "no events".
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/v1/audit?*', async (route) => {
    await held;
    await route.fallback();
  });
  await page.goto(`${h.base}/audit`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading events…' }).isVisible()).toBe(true);
  expect(await visibleText(page)).not.toMatch(/No audit events/);
  release();

  // The default week: the gateway requests and the project change, not the key deleted 10 days ago.
  await expect.poll(() => rowsOfType(page, 'project.updated')).toBe(1);
  expect(await rowsOfType(page, 'gateway.request')).toBe(4);
  expect(await rowsOfType(page, 'key.deleted')).toBe(0);
  const region = page.getByRole('region', { name: 'Events, newest first' });
  expect(await region.getByRole('columnheader', { name: 'Project' }).count()).toBe(1);
  // Key names come from the keys lists, which may answer after the events.
  await expect.poll(() => events(page).filter({ hasText: 'QUOTA_EXCEEDED' }).textContent()).toMatch(/Search.*search-api/);
  expect(await events(page).filter({ hasText: 'project.updated' }).textContent()).toContain(`${ADMIN_EMAIL} (you)`);
  expect(await page.getByText(/3 failed on this page/).count()).toBe(1);
  // No sideways scrolling at 1440 px, neither the page nor the table's frame.
  expect(await sideways(page)).toEqual({ page: false, frames: false });

  // Presets.
  await apply(page, { range: '1h' });
  await expect.poll(() => rowsOfType(page, 'project.updated')).toBe(0);
  expect(await rowsOfType(page, 'gateway.request')).toBe(4);
  expect(param(page, 'range')).toBe('1h');
  await apply(page, { range: '30d' });
  await expect.poll(() => rowsOfType(page, 'key.deleted')).toBe(1);

  // Type and outcome are choices; each goes into the address and survives a reload.
  const types = await page.getByLabel('Type', { exact: true }).locator('option').allTextContents();
  expect(types).toEqual(expect.arrayContaining(['Any type', 'gateway.request', 'key.deleted', 'project.updated']));
  await apply(page, { type: 'gateway.request', outcome: 'policy_blocked' });
  await expect.poll(() => events(page).count()).toBe(1);
  expect([param(page, 'type'), param(page, 'outcome'), param(page, 'range')]).toEqual(['gateway.request', 'policy_blocked', '30d']);
  await page.reload();
  await signInIfAsked(page);
  await expect.poll(() => events(page).count()).toBe(1);
  await expect.poll(() => page.getByLabel('Outcome', { exact: true }).inputValue()).toBe('policy_blocked');
  await expect.poll(() => page.getByLabel('Type', { exact: true }).inputValue()).toBe('gateway.request');
  await page.goBack();
  await expect.poll(() => param(page, 'outcome')).toBe(null);
  await expect.poll(() => rowsOfType(page, 'key.deleted')).toBe(1);

  // The details panel: every field, names beside ids; Escape closes it and focus comes back.
  await apply(page, { type: 'gateway.request', outcome: 'policy_blocked' });
  await expect.poll(() => events(page).count()).toBe(1);
  const details = events(page).first().getByRole('button', { name: /^Details/ });
  await details.click();
  const panel = page.getByRole('dialog', { name: /^gateway\.request · \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/ });
  await expect.poll(() => panel.isVisible()).toBe(true);
  const text = (await panel.textContent()) ?? '';
  for (const expected of ['QUOTA_EXCEEDED', 'HTTP status429', 'search-api', 'Search', AGENT, 'Client address203.0.113.7', 'Providers triedmock']) expect(text).toContain(expected);
  const box = await panel.boundingBox();
  expect(box!.x + box!.width).toBeLessThanOrEqual(WIDE.width + 1);
  expect(box!.width).toBeLessThan(WIDE.width / 2);
  await shot(page, 'audit-details-wide', { fullPage: false });
  await page.keyboard.press('Escape');
  await expect.poll(() => panel.isVisible()).toBe(false);
  expect(await details.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
  // A click anywhere on the row opens it too.
  await events(page).first().getByRole('cell').first().click();
  await expect.poll(() => panel.isVisible()).toBe(true);
  await panel.getByRole('button', { name: 'Close' }).click();
  await expect.poll(() => panel.isVisible()).toBe(false);

  // Nothing matches: said so, with a way out that keeps the range.
  await apply(page, { range: '1h', type: 'key.deleted', outcome: '' });
  await expect.poll(() => page.getByText('No audit events match these filters in this range.').isVisible()).toBe(true);
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect.poll(() => rowsOfType(page, 'gateway.request')).toBe(4);
  expect([param(page, 'type'), param(page, 'range')]).toEqual([null, '1h']);

  // An error is shown, and no stale rows stand in for the answer.
  const fail = (route: Route) =>
    route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { message: 'Internal error.', type: 'server_error', param: null, code: 'INTERNAL' } }) });
  await page.route('**/v1/audit?*', fail);
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Loading audit events failed' }).isVisible()).toBe(true);
  expect(await events(page).count()).toBe(0);
  await page.unroute('**/v1/audit?*', fail);

  // One project: no Project column.
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Checkout' });
  await expect.poll(() => param(page, 'project')).toBe(checkout);
  await apply(page, { range: '7d' });
  await expect.poll(() => rowsOfType(page, 'gateway.request')).toBe(2);
  expect(await region.getByRole('columnheader', { name: 'Project' }).count()).toBe(0);

  // The pictures: every project over the week, light and dark.
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'All projects' });
  await expect.poll(() => rowsOfType(page, 'project.updated')).toBe(1);
  expect(await sideways(page)).toEqual({ page: false, frames: false });
  await shot(page, 'audit-wide');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'audit-dark');

  expect(problems).toEqual([]);
  await context.close();
});

it('on a phone: folded filters, one card per event, details in a full-screen sheet', { timeout: 120_000 }, async () => {
  const { context, page, problems } = await newPage(PHONE);
  await page.goto(`${h.base}/audit?range=30d`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await expect.poll(() => rowsOfType(page, 'key.deleted')).toBe(1);
  const toggle = page.getByRole('button', { name: /^Filters/ });
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  expect(await page.getByLabel('Outcome', { exact: true }).isVisible()).toBe(false);
  await toggle.click();
  await expect.poll(() => page.getByLabel('Range', { exact: true }).inputValue()).toBe('30d');
  await toggle.click();

  const display = await events(page)
    .first()
    .evaluate((row) => (globalThis as unknown as { getComputedStyle(el: unknown): { display: string } }).getComputedStyle(row).display);
  expect(display).toBe('grid');
  expect(await sideways(page)).toEqual({ page: false, frames: false });
  await shot(page, 'audit-phone', { fullPage: false });

  await events(page).filter({ hasText: 'QUOTA_EXCEEDED' }).getByRole('button', { name: /^Details/ }).click();
  const sheet = page.getByRole('dialog', { name: /^gateway\.request/ });
  await expect.poll(() => sheet.isVisible()).toBe(true);
  const box = await sheet.boundingBox();
  expect(box).toMatchObject({ x: 0, width: PHONE.width });
  expect(await sheet.textContent()).toContain(AGENT);
  await shot(page, 'audit-details-phone', { fullPage: false });
  await sheet.getByRole('button', { name: 'Close' }).click();
  await expect.poll(() => sheet.isVisible()).toBe(false);

  expect(problems).toEqual([]);
  await context.close();
});

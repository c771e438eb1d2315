import { readFileSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page, type Route } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { describeBucket, pickBucketMs } from '../../dashboard/src/lib/usage-series.js';
import { CHROMIUM, CHROMIUM_ARGS, DAY, HOUR, insertUsage, MINUTE, PHONE, shot, sideways, signIn, visibleText, watchProblems, WIDE } from './record-pages-support.js';

/**
 * The Usage page end to end in a real headless Chromium against a real control plane and
 * PostgreSQL: two projects with named keys and records at known distances from now, so every
 * range preset, breakdown and filter has a known answer. The browser runs in Asia/Kolkata
 * (UTC+05:30) so the time zone shown and the local month are not UTC by accident.
 */
const ZONE = 'Asia/Kolkata';
const ZONE_OFFSET = 5.5 * HOUR;

let h: Harness;
let browser: Browser | undefined;
let checkout: string;
let search: string;
const NOW = Date.now();
const EVIL_MODEL = '=HYPERLINK("http://evil.test","x")';
/** Records in each preset range (see the seed below). */
const IN = { '1h': 4, '24h': 8, '7d': 13, '30d': 15 };
let inThisMonth = 0;
/** The chart bucket(s) of "This month": the month so far decides it, read at any moment of the run. */
let monthBuckets = '';

/** A local time of the browser's zone as the page shows and takes it. */
const local = (ms: number) => new Date(ms + ZONE_OFFSET).toISOString().slice(0, 16).replace('T', ' ');

beforeAll(async () => {
  h = await startHarness('dashusage');
  const project = async (name: string) => (await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name } })).body.id as string;
  checkout = await project('Checkout');
  search = await project('Search');
  const key = async (projectId: string, name: string) => (await h.api('POST', `/v1/projects/${projectId}/keys`, { token: h.adminToken, body: { name } })).body.id as string;
  const web = await key(checkout, 'checkout-web');
  const batch = await key(checkout, 'checkout-batch');
  const api = await key(search, 'search-api');
  const seed = [
    // The last hour: 4.
    { ts: NOW - 10 * MINUTE, project_id: checkout, key_id: web, model: 'gpt-4o', provider: 'openai', tokens: 1000, cost: '0.0125' },
    { ts: NOW - 20 * MINUTE, project_id: checkout, key_id: batch, model: 'claude-sonnet', provider: 'anthropic', tokens: 400, cost: '0.006' },
    { ts: NOW - 30 * MINUTE, project_id: search, key_id: api, model: 'gpt-4o-mini', provider: 'openai', tokens: 200 },
    { ts: NOW - 40 * MINUTE, project_id: search, key_id: api, model: EVIL_MODEL, provider: 'mock', tokens: 50 },
    // The last 24 hours: 4 more.
    ...[0, 1, 2].map((i) => ({ ts: NOW - 5 * HOUR - i * MINUTE, project_id: checkout, key_id: web, model: 'gpt-4o', provider: 'openai', tokens: 500, cost: '0.005' })),
    { ts: NOW - 6 * HOUR, project_id: search, key_id: api, model: 'gpt-4o-mini', provider: 'openai', tokens: 300, finish_reason: 'content_filter' },
    // The last 7 days: 5 more.
    ...[0, 1, 2, 3, 4].map((i) => ({ ts: NOW - 3 * DAY - i * HOUR, project_id: checkout, key_id: batch, model: 'gpt-4o-mini', provider: 'openai', tokens: 250 })),
    // The last 30 days: 2 more.
    ...[0, 1].map((i) => ({ ts: NOW - 20 * DAY - i * HOUR, project_id: search, key_id: api, model: 'claude-sonnet', provider: 'anthropic', tokens: 800, cost: '0.012' })),
  ];
  await insertUsage(h, seed);
  const here = new Date(NOW + ZONE_OFFSET);
  const monthStart = Date.UTC(here.getUTCFullYear(), here.getUTCMonth(), 1) - ZONE_OFFSET;
  inThisMonth = seed.filter((r) => r.ts >= monthStart).length;
  // The page takes its range from its own clock a little later than NOW; both ends of that wait
  // are allowed, so a run just before a bucket's threshold passes as well.
  const monthBucket = (at: number) => describeBucket(pickBucketMs(Math.ceil((at + 1) / MINUTE) * MINUTE - monthStart));
  monthBuckets = [...new Set([monthBucket(NOW), monthBucket(NOW + 10 * MINUTE)])].join('|');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function newPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport, locale: 'en-US', timezoneId: ZONE, reducedMotion: 'reduce', acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page, problems: watchProblems(page) };
}

/** After a reload: sign in again if the session did not survive it (the address is kept either way). */
async function signInIfAsked(page: Page): Promise<void> {
  const signOut = page.getByRole('button', { name: 'Sign out' });
  const email = page.getByLabel('Email');
  await expect.poll(async () => (await signOut.isVisible()) || (await email.isVisible())).toBe(true);
  if (await email.isVisible()) await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}

const stats = (page: Page) => page.locator('.stats').textContent();
const param = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);
const chartLabel = (page: Page) => page.locator('.chart-canvas').getAttribute('aria-label');

async function chooseRange(page: Page, preset: string): Promise<void> {
  await page.getByLabel('Range', { exact: true }).selectOption(preset);
  await page.getByRole('button', { name: 'Apply filters' }).click();
}

async function exportCsv(page: Page): Promise<string[][]> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}T\d{4}Z\.csv$/);
  // A download the browser makes by following the link (the ticket stands in for the bearer token).
  expect(new URL(download.url()).pathname).toBe('/v1/usage/export/download');
  const text = readFileSync((await download.path()) as string, 'utf8');
  // The cells compared here hold no quotes, commas or line breaks except the one checked by hand.
  return text
    .trimEnd()
    .split('\r\n')
    .map((line) => line.split(','));
}

it('shows totals, cost, breakdowns, presets and filters from the address, and exports the filtered records', { timeout: 180_000 }, async () => {
  const { context, page, problems } = await newPage(WIDE);

  // Every request the page makes, to count how key names are read.
  const requested: string[] = [];
  page.on('request', (req) => requested.push(new URL(req.url()).pathname));

  // Loading shows as loading, never as "no usage": the totals and the records are held back until released.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const hold = async (route: Route) => {
    await held;
    await route.fallback();
  };
  await page.route('**/v1/usage/summary*', hold);
  await page.route(/\/v1\/usage\?/, hold);
  await page.goto(`${h.base}/usage`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading totals…' }).isVisible()).toBe(true);
  expect(await visibleText(page)).not.toMatch(/No usage/);
  const pager = page.getByRole('navigation', { name: 'Usage record pages' });
  await expect.poll(() => pager.textContent()).toContain('Page 1 · Loading…');
  expect(await pager.textContent()).not.toContain('no records');
  release();
  await expect.poll(() => pager.textContent()).toMatch(/Page 1 · records 1–\d+/);

  // The default: the last 24 hours of every project, with cost beside tokens, in the browser's zone.
  await expect.poll(() => stats(page)).toContain(`Requests${IN['24h']}`);
  expect(await stats(page)).toMatch(/Cost\$0\.03/);
  // ICU may name the zone by its older alias.
  expect(await visibleText(page)).toMatch(/Times in UTC\+05:30 \(Asia\/(Kolkata|Calcutta)\)/);
  await expect.poll(() => chartLabel(page)).toMatch(/^Total tokens per 5 minutes/);
  const records = page.getByRole('region', { name: 'Records' });
  await expect.poll(() => records.getByRole('columnheader', { name: 'Project' }).count()).toBe(1);
  expect(await records.getByRole('row', { name: /checkout-web/ }).first().textContent()).toContain('Checkout');
  // "All projects" names the keys of every project from one list, not one request per project.
  expect(requested.filter((path) => path === '/v1/keys')).toHaveLength(1);
  expect(requested.filter((path) => /^\/v1\/projects\/[^/]+\/keys$/.test(path))).toEqual([]);

  // Each preset is its own range, with a chart bucket to match, and goes into the address.
  for (const [preset, count, bucket] of [
    ['1h', IN['1h'], 'minute'],
    ['7d', IN['7d'], 'hour'],
    ['30d', IN['30d'], 'day'],
    ['month', inThisMonth, `(${monthBuckets})`],
    ['24h', IN['24h'], '5 minutes'],
  ] as const) {
    await chooseRange(page, preset);
    await expect.poll(() => stats(page), { message: preset }).toContain(`Requests${count}`);
    await expect.poll(() => chartLabel(page), { message: preset }).toMatch(new RegExp(`^Total tokens per ${bucket} `));
    expect(param(page, 'range')).toBe(preset === '24h' ? null : preset);
  }

  // Breakdowns: by project and by key, by name; keys name their project in the all-projects view.
  await page.getByRole('button', { name: 'Project', exact: true }).click();
  const byProject = page.getByRole('region', { name: 'By project' });
  await expect.poll(() => byProject.textContent()).toContain('Checkout');
  expect(await byProject.textContent()).toContain('Search');
  expect(param(page, 'by')).toBe('project');
  await page.getByRole('button', { name: 'Key', exact: true }).click();
  const byKey = page.getByRole('region', { name: 'By key' });
  await expect.poll(() => byKey.getByRole('row', { name: /checkout-web/ }).textContent()).toContain('Checkout');
  expect(await byKey.textContent()).toContain('search-api');
  expect(await byKey.textContent()).not.toMatch(/[0-9a-f]{8}…/);
  await page.getByRole('button', { name: 'Provider', exact: true }).click();
  const byProvider = page.getByRole('region', { name: 'By provider' });
  await expect.poll(() => byProvider.getByRole('row', { name: /anthropic/ }).textContent()).toContain('$0.006');

  // Models and providers are choices from what the range holds.
  const options = (label: string) => page.getByLabel(label, { exact: true }).locator('option').allTextContents();
  await expect.poll(() => options('Model')).toEqual(['Any model', 'gpt-4o', 'gpt-4o-mini', 'claude-sonnet', EVIL_MODEL]);
  expect((await options('Provider')).sort()).toEqual(['Any provider', 'anthropic', 'mock', 'openai']);

  // A filter goes into the address and survives a reload, Back and Forward.
  await page.getByLabel('Model', { exact: true }).selectOption('gpt-4o');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect.poll(() => stats(page)).toContain('Requests4');
  expect(param(page, 'model')).toBe('gpt-4o');
  await page.reload();
  await signInIfAsked(page);
  await expect.poll(() => stats(page)).toContain('Requests4');
  await expect.poll(() => page.getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o');
  expect(await page.getByRole('button', { name: 'Provider', exact: true }).getAttribute('aria-pressed')).toBe('true');
  await page.goBack();
  await expect.poll(() => param(page, 'model')).toBe(null);
  await expect.poll(() => stats(page)).toContain(`Requests${IN['24h']}`);
  await expect.poll(() => page.getByLabel('Model', { exact: true }).inputValue()).toBe('');
  await page.goForward();
  await expect.poll(() => stats(page)).toContain('Requests4');
  await expect.poll(() => page.getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-4o');

  // Nothing matches: said so, with a way out.
  await page.getByLabel('Finish reason').selectOption('content_filter');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const nothing = page.getByText('No usage matches these filters in this range.');
  await expect.poll(() => nothing.isVisible()).toBe(true);
  await expect.poll(() => visibleText(page)).toContain('No usage records match these filters.');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect.poll(() => stats(page)).toContain(`Requests${IN['24h']}`);
  expect([param(page, 'model'), param(page, 'finish_reason')]).toEqual([null, null]);

  // An error hides the totals rather than showing stale ones; "Try again" brings them back.
  const fail = (route: Route) =>
    route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { message: 'Internal error.', type: 'server_error', param: null, code: 'INTERNAL' } }) });
  await page.route('**/v1/usage/summary*', fail);
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Loading the totals failed' }).isVisible()).toBe(true);
  expect(await page.locator('.stats').count()).toBe(0);
  await page.unroute('**/v1/usage/summary*', fail);
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect.poll(() => stats(page)).toContain(`Requests${IN['24h']}`);

  // A custom range, typed in the page's one date format, is kept in the address as UTC minutes.
  await page.getByLabel('Range', { exact: true }).selectOption('custom');
  await page.getByLabel('From', { exact: true }).fill(local(NOW - 6.5 * HOUR));
  await page.getByLabel('To', { exact: true }).fill(local(NOW - 4 * HOUR));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect.poll(() => stats(page)).toContain('Requests4');
  expect(param(page, 'range')).toBe('custom');
  expect(param(page, 'from')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/);
  await page.reload();
  await signInIfAsked(page);
  await expect.poll(() => stats(page)).toContain('Requests4');
  await expect.poll(() => page.getByLabel('Range', { exact: true }).inputValue()).toBe('custom');
  await expect.poll(() => page.getByLabel('From', { exact: true }).inputValue()).toBe(local(NOW - 6.5 * HOUR));

  // One date format on the whole page: no locale dates, no AM/PM.
  const text = await visibleText(page);
  expect(text).not.toMatch(/\d{1,2}\/\d{1,2}\/\d{2,4}/);
  expect(text).not.toMatch(/\d (AM|PM)\b/);

  // The CSV export holds every record the filters select: one project over 7 days here.
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Checkout' });
  await expect.poll(() => param(page, 'project')).toBe(checkout);
  await chooseRange(page, '7d');
  await expect.poll(() => stats(page)).toContain('Requests10');
  const rows = await exportCsv(page);
  const header = rows[0] as string[];
  expect(header.slice(0, 8)).toEqual(['timestamp', 'id', 'request_id', 'project_id', 'project_name', 'key_id', 'key_name', 'model']);
  expect(rows).toHaveLength(11);
  expect(new Set(rows.slice(1).map((r) => r[header.indexOf('project_name')]))).toEqual(new Set(['Checkout']));
  expect(new Set(rows.slice(1).map((r) => r[header.indexOf('key_name')]))).toEqual(new Set(['checkout-web', 'checkout-batch']));
  await expect.poll(() => page.locator('.toasts').textContent()).toContain('Export started');
  // The browser fetched the file itself, by a link, streaming it to disk: no script read it whole.
  expect(requested.filter((path) => path === '/v1/usage/export')).toEqual([]);


  // Every project, the last hour: the client-chosen model name cannot run as a formula.
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'All projects' });
  await expect.poll(() => param(page, 'project')).toBe(null);
  await chooseRange(page, '1h');
  await expect.poll(() => stats(page)).toContain(`Requests${IN['1h']}`);
  const all = readFileSync((await (await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]))[0].path()) as string, 'utf8');
  expect(all.trimEnd().split('\r\n')).toHaveLength(IN['1h'] + 1);
  expect(all).toContain(`"'=HYPERLINK(""http://evil.test"",""x"")"`);

  // The page never scrolls sideways; then the pictures, light and dark.
  await chooseRange(page, '7d');
  await page.getByRole('button', { name: 'Model', exact: true }).click();
  await expect.poll(() => stats(page)).toContain(`Requests${IN['7d']}`);
  await expect.poll(() => chartLabel(page)).toMatch(/^Total tokens per hour/);
  expect(await sideways(page)).toEqual({ page: false, frames: false });
  await shot(page, 'usage-wide');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'usage-dark');

  expect(problems).toEqual([]);
  await context.close();
});

it('fits a phone: filters fold away, records become cards, the address restores the view', { timeout: 120_000 }, async () => {
  const { context, page, problems } = await newPage(PHONE);
  await page.goto(`${h.base}/usage?project=${checkout}&range=7d&by=key`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await expect.poll(() => stats(page)).toContain('Requests10');
  // The figures may come before the projects list that fills the picker.
  await expect.poll(() => page.getByLabel('Project', { exact: true }).inputValue()).toBe(checkout);

  // The filters start folded; the toggle opens them, with the address's values in place.
  const toggle = page.getByRole('button', { name: /^Filters/ });
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');
  expect(await page.getByLabel('Range', { exact: true }).isVisible()).toBe(false);
  await toggle.click();
  await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
  await expect.poll(() => page.getByLabel('Range', { exact: true }).inputValue()).toBe('7d');

  // By key, by name; the records as cards, each value labelled.
  await expect.poll(() => page.getByRole('region', { name: 'By key' }).textContent()).toContain('checkout-batch');
  // Each share ("54%") stays one piece on the line of its bar, never broken before its "%".
  const shares = await page
    .getByRole('region', { name: 'By key' })
    .locator('.share')
    .evaluateAll((els) =>
      els.map((el) => {
        type Rect = { top: number; bottom: number; height: number };
        const e = el as unknown as { getBoundingClientRect(): Rect; querySelector(s: string): { getClientRects(): ArrayLike<Rect>; getBoundingClientRect(): Rect } };
        const value = e.querySelector('.share-value');
        const bar = e.querySelector('.share-track').getBoundingClientRect();
        const text = value.getBoundingClientRect();
        return { lines: value.getClientRects().length, sameLine: text.top < bar.bottom && text.bottom > bar.top };
      }),
    );
  expect(shares.length).toBeGreaterThan(0);
  expect(shares.every((s) => s.lines === 1 && s.sameLine)).toBe(true);
  const records = page.getByRole('region', { name: 'Records' });
  await expect.poll(() => records.getByRole('row', { name: /checkout-web/ }).count()).toBeGreaterThan(0);
  const display = await records
    .locator('tbody tr')
    .first()
    .evaluate((row) => (globalThis as unknown as { getComputedStyle(el: unknown): { display: string } }).getComputedStyle(row).display);
  expect(display).toBe('grid');
  expect(await sideways(page)).toEqual({ page: false, frames: false });
  await toggle.click();
  // The first screen, then the records as cards (the whole page is many screens long).
  await shot(page, 'usage-phone', { fullPage: false });
  await page.getByRole('heading', { name: 'Records' }).scrollIntoViewIfNeeded();
  await page.evaluate(() => (globalThis as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, -8));
  await shot(page, 'usage-phone-records', { fullPage: false });

  expect(problems).toEqual([]);
  await context.close();
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '@gateway/shared';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectNoSidewaysScroll, focused, launch, openPage, shot, signIn, VIEWPORTS, type InPage, type Viewport } from './projects-keys-support.js';

/**
 * The projects page in a real Chromium against a real control plane, at 1440×900 and 390×844:
 * search, order and paging; every setting on the cards, the project id to copy, quota states at
 * 80 % and 100 % in words and in the page header, an allow-list that refuses everything; the
 * settings dialog for every setting (asking before a project goes unlimited); deleting by typing
 * the name; and a viewer who sees no controls to change what it may not.
 */
let h: Harness;
let browser: Browser;
let viewer: { id: string; email: string; password: string };

async function createProject(body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await h.api('POST', '/v1/projects', { token: h.adminToken, body });
  expect(res.status).toBe(201);
  return res.body;
}

/** Tokens used, where the control plane reads them: Postgres's settled count and the Redis ledger. */
async function setUsed(projectId: string, tokens: number): Promise<void> {
  await h.sql`update projects set used_tokens = ${tokens} where id = ${projectId}`;
  await h.redis.hset(new RedisKeys(h.prefix).quotaLedger(projectId, 'total'), 'charged', String(tokens));
}

beforeAll(async () => {
  h = await startHarness('dash-projects');
  browser = await launch();
  const near = await createProject({ name: 'Checkout', quota_tokens: 10_000, rate_limits: { key_rpm: 60 }, allowed_models: ['mock-1'], max_tokens_cap: 2048 });
  await setUsed(near.id, 8_500);
  const out = await createProject({ name: 'Search indexer', quota_tokens: 1_000, quota_period: 'total' });
  await setUsed(out.id, 1_000);
  await createProject({ name: 'Locked down', allowed_models: [] });
  await createProject({ name: 'Legacy', allowed_models: ['gpt-3.5-turbo'] });
  for (let i = 1; i <= 10; i++) await createProject({ name: `Team ${String(i).padStart(2, '0')}` });
  const member = await h.createUser('member');
  viewer = member;
  expect((await h.api('POST', `/v1/projects/${near.id}/members`, { token: h.adminToken, body: { user_id: member.id, role: 'viewer' } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function projectsOf(): Promise<{ id: string; name: string; quota_tokens: number | null; quota_period: string; rate_limits: Record<string, number | null>; allowed_models: string[] | null; max_tokens_cap: number | null }[]> {
  return (await h.api('GET', '/v1/projects', { token: h.adminToken })).body.data;
}

const cards = (page: Page) => page.locator('ul.cards > li article');
const searchBox = (page: Page) => page.getByRole('searchbox', { name: 'Search' });

describe.each(VIEWPORTS)('at $label ($width×$height)', (viewport: Viewport) => {
  it('searches, sorts and pages the projects; shows every setting, the id, quota states and a refusing allow-list', { timeout: 90_000 }, async () => {
    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, '/projects', ADMIN_EMAIL, ADMIN_PASSWORD);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Projects');

    // The header counts the projects that need attention, in words with an icon.
    const summary = page.locator('.quota-summary');
    await expect.poll(() => summary.textContent()).toContain('1 project out of quota · 1 project near its quota');
    expect(await summary.textContent()).toContain('✕');

    // Paging: 12 to a page, by name.
    const total = (await projectsOf()).length;
    await expect.poll(() => cards(page).count()).toBe(12);
    expect(await page.locator('#project-count').textContent()).toBe(`${total} projects`);
    const pager = page.getByRole('navigation', { name: 'Project pages' });
    expect(await pager.textContent()).toContain(`Page 1 of 2`);
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => cards(page).count()).toBe(total - 12);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => cards(page).first().getAttribute('aria-labelledby')).toBeTruthy();
    expect(await cards(page).first().locator('h3').textContent()).toBe('Checkout');

    // "Show them first" orders by quota use: the exhausted project leads, then the one near it.
    await summary.getByRole('button', { name: 'Show them first' }).click();
    await expect.poll(() => cards(page).locator('h3').allTextContents().then((t) => t.slice(0, 2))).toEqual(['Search indexer', 'Checkout']);
    expect(await page.getByLabel('Sort by').inputValue()).toBe('usage');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('usage');
    await page.getByLabel('Sort by').selectOption('created');
    await expect.poll(() => cards(page).first().locator('h3').textContent()).not.toBe('Search indexer');

    // Quota states on the cards: icon and words, not colour alone.
    const checkout = page.getByRole('article', { name: 'Checkout' });
    const indexer = page.getByRole('article', { name: 'Search indexer' });
    await searchBox(page).fill('checkout');
    await expect.poll(() => cards(page).count()).toBe(1);
    expect(await page.locator('#project-count').textContent()).toBe(`1 of ${total} projects match`);
    expect(await checkout.locator('.badge').textContent()).toBe('⚠ Near quota (85%)');
    // Every setting, in words.
    const settingsText = await checkout.locator('dl').textContent();
    for (const text of ['10,000 tokens in total', '60 requests/min · no limit', 'no limit · no limit', 'mock-1', 'at most 2,048 per request']) expect(settingsText).toContain(text);
    // The id, copied.
    const id = (await projectsOf()).find((p) => p.name === 'Checkout')!.id;
    expect(await checkout.locator('.project-id code').textContent()).toBe(id);
    await checkout.getByRole('button', { name: 'Copy id' }).click();
    await expect.poll(() => checkout.locator('.project-id').getByRole('status').textContent()).toBe('✓ Copied');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText())).toBe(id);
    await expectNoSidewaysScroll(page, 'searched list');

    // The search stays in the address: a reload shows the same.
    expect(new URL(page.url()).searchParams.get('q')).toBe('checkout');
    await searchBox(page).fill('search ind');
    await expect.poll(() => indexer.locator('.badge').textContent()).toBe('✕ Out of quota');
    expect(await indexer.textContent()).toContain('quota exhausted');

    // Allow-lists that let nothing through: empty, or only models the gateway does not serve.
    await searchBox(page).fill('l');
    const locked = page.getByRole('article', { name: 'Locked down' });
    const legacy = page.getByRole('article', { name: 'Legacy' });
    await expect.poll(() => locked.getByRole('note').textContent()).toContain('No model allowed: the allow-list is empty, so every request is refused.');
    await expect.poll(() => legacy.getByRole('note').textContent()).toContain('only models this gateway does not serve (gpt-3.5-turbo)');
    expect(await page.getByRole('article', { name: 'Team 01' }).getByRole('note').count()).toBe(0);
    await searchBox(page).fill('no such project');
    await expect.poll(() => page.getByText('No project matches “no such project”.').isVisible()).toBe(true);

    await searchBox(page).fill('');
    await page.getByLabel('Sort by').selectOption('name');
    await expect.poll(() => cards(page).count()).toBe(12);
    await expectNoSidewaysScroll(page, 'project list');
    // The picture starts at the list (on a phone: the first cards), with the search not focused.
    await searchBox(page).blur();
    await page.locator('#project-list-heading').evaluate((el) => (el as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start' }));
    await shot(page, `projects-${viewport.label}`, { fullPage: viewport.label === 'wide' });
    if (viewport.label === 'wide') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'projects-dark');
      await page.emulateMedia({ colorScheme: 'light' });
    }
    expect(problems).toEqual([]);
    await context.close();
  });

  it('edits every setting in one dialog, and asks before taking the quota away', { timeout: 90_000 }, async () => {
    const name = `Settings ${viewport.label}`;
    const created = await createProject({ name, quota_tokens: 5_000 });
    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, `/projects?q=${encodeURIComponent(name)}`, ADMIN_EMAIL, ADMIN_PASSWORD);
    const card = page.getByRole('article', { name });
    await card.getByRole('button', { name: `Settings of ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Settings of “${name}”` });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('input:settings-name');

    // A bad value is named at its field, and nothing is sent.
    await dialog.getByLabel('Tokens per key').fill('lots');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => dialog.locator('#settings-key-tpm-problem').textContent()).toContain('Enter a whole number');
    expect(await dialog.getByLabel('Tokens per key').getAttribute('aria-invalid')).toBe('true');

    const renamed = `${name} (prod)`;
    await dialog.getByLabel('Name').fill(renamed);
    await dialog.getByLabel('Tokens', { exact: true }).fill('20,000');
    await dialog.getByLabel('Counted').selectOption('month');
    await dialog.getByLabel('Requests per key').fill('120');
    await dialog.getByLabel('Tokens per key').fill('50000');
    await dialog.getByLabel('Requests per project').fill('600');
    await dialog.getByLabel('Tokens per project').fill('1 000 000');
    await dialog.getByLabel('Max tokens per request').fill('4096');
    // The allow-list is picked from the models the gateway serves.
    await dialog.getByLabel('Only the models ticked below').check();
    const choices = dialog.getByRole('list', { name: 'Allowed models' });
    expect(await choices.locator('code').allTextContents()).toEqual(['mock-1', 'mock-1-mini']);
    // Ticking none is allowed, but said plainly.
    await expect.poll(() => dialog.getByRole('alert').filter({ hasText: 'No model allowed' }).isVisible()).toBe(true);
    await choices.getByLabel(/mock-1-mini/).check();
    await expect.poll(() => dialog.getByRole('alert').filter({ hasText: 'No model allowed' }).count()).toBe(0);
    // Aliases as text, one per line; a line without its model is named at the field.
    await dialog.getByLabel('Model aliases').fill('claude-sonnet-4-5');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => dialog.locator('#settings-aliases-problem').textContent()).toContain('Line 1');
    await dialog.getByLabel('Model aliases').fill('claude-sonnet-4-5 = mock-1-mini\ngpt-5 = mock-1');
    await dialog.getByLabel('Parameters a translation cannot carry').selectOption('refuse');
    await dialog.getByLabel('Stored responses are kept for (days)').fill('7');
    await expectNoSidewaysScroll(page, 'settings dialog');
    await page.locator('dialog[open]').evaluate((el) => void ((el as unknown as { scrollTop: number }).scrollTop = 0));
    await shot(page, `project-settings-${viewport.label}`, { fullPage: false });
    if (viewport.label === 'wide') {
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'project-settings-dark', { fullPage: false });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await expect.poll(() => page.locator('.toasts').textContent()).toContain(`Settings of “${renamed}” saved.`);
    expect((await projectsOf()).find((p) => p.id === created.id)).toMatchObject({
      name: renamed,
      quota_tokens: 20_000,
      quota_period: 'month',
      rate_limits: { key_rpm: 120, key_tpm: 50_000, project_rpm: 600, project_tpm: 1_000_000 },
      allowed_models: ['mock-1-mini'],
      max_tokens_cap: 4096,
      model_aliases: { 'claude-sonnet-4-5': 'mock-1-mini', 'gpt-5': 'mock-1' },
      unsupported_params: 'refuse',
      responses: { ttl_days: 7 },
    });
    await expect.poll(() => focused(page)).toBe(`button:Settings of ${renamed}`);

    // Clearing the quota asks first; keeping it changes nothing.
    await searchBox(page).fill(renamed);
    const renamedCard = page.getByRole('article', { name: renamed });
    await expect.poll(() => renamedCard.textContent()).toContain('20,000 tokens per calendar month (UTC)');
    await expect.poll(() => renamedCard.textContent()).toContain('2 aliases · refuses params it cannot carry · responses kept 7 d');
    await renamedCard.getByRole('button', { name: `Settings of ${renamed}` }).click();
    const settingsDialog = page.getByRole('dialog', { name: `Settings of “${renamed}”` });
    await settingsDialog.getByLabel('Tokens', { exact: true }).fill('');
    await settingsDialog.getByRole('button', { name: 'Save settings' }).click();
    const question = settingsDialog.getByRole('alert').filter({ hasText: `Make “${renamed}” unlimited?` });
    await expect.poll(() => question.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('button:Keep the quota');
    await expectNoSidewaysScroll(page, 'unlimited question');
    await question.getByRole('button', { name: 'Keep the quota' }).click();
    expect((await projectsOf()).find((p) => p.id === created.id)?.quota_tokens).toBe(20_000);
    await settingsDialog.getByRole('button', { name: 'Save settings' }).click();
    await question.getByRole('button', { name: 'Make unlimited' }).click();
    await expect.poll(() => settingsDialog.isVisible()).toBe(false);
    await expect.poll(async () => (await projectsOf()).find((p) => p.id === created.id)?.quota_tokens).toBeNull();
    await expect.poll(() => renamedCard.textContent()).toContain('unlimited');
    // The other settings stayed as they were: only the quota was sent.
    expect((await projectsOf()).find((p) => p.id === created.id)?.rate_limits.key_rpm).toBe(120);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('deletes a project only once its name is typed', { timeout: 60_000 }, async () => {
    const name = `Doomed ${viewport.label}`;
    const created = await createProject({ name });
    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, `/projects?q=${encodeURIComponent(name)}`, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('button', { name: `Delete project ${name}` }).click();
    const dialog = page.getByRole('alertdialog', { name: `Delete project “${name}”?` });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expect.poll(() => focused(page)).toBe('input:delete-project-name');
    const button = dialog.getByRole('button', { name: 'Delete project' });
    expect(await button.getAttribute('aria-disabled')).toBe('true');
    // A near miss does nothing.
    await dialog.getByLabel(`Type ${name} to confirm`).fill(name.toLowerCase());
    await dialog.getByLabel(`Type ${name} to confirm`).press('Enter');
    expect(await dialog.isVisible()).toBe(true);
    expect((await h.api('GET', `/v1/projects/${created.id}`, { token: h.adminToken })).status).toBe(200);
    await expectNoSidewaysScroll(page, 'delete dialog');
    await dialog.getByLabel(`Type ${name} to confirm`).fill(name);
    expect(await dialog.locator('#delete-project-hint').textContent()).toBe('✓ The name matches.');
    expect(await button.getAttribute('aria-disabled')).toBe('false');
    if (viewport.label === 'wide') await shot(page, 'project-delete-wide', { fullPage: false });
    await button.click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    await expect.poll(() => page.locator('.toasts').textContent()).toContain(`Project “${name}” deleted.`);
    expect((await h.api('GET', `/v1/projects/${created.id}`, { token: h.adminToken })).status).toBe(404);
    await expect.poll(() => focused(page)).toBe('h1:Projects');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows a viewer the project's settings without the controls to change them", { timeout: 60_000 }, async () => {
    const { context, page, problems } = await openPage(browser, h.base, viewport);
    await signIn(page, h.base, '/projects', viewer.email, viewer.password);
    const card = page.getByRole('article', { name: 'Checkout' });
    await expect.poll(() => card.textContent()).toContain('You are a viewer of this project. Project admins and owners change its settings.');
    expect(await card.getByRole('button', { name: /Settings|Delete/ }).count()).toBe(0);
    expect(await card.locator('dl').textContent()).toContain('60 requests/min');
    // Any account may create a project of its own.
    expect(await page.getByRole('button', { name: 'Create project' }).isVisible()).toBe(true);
    await expectNoSidewaysScroll(page, 'viewer');
    expect(problems).toEqual([]);
    await context.close();
  });
});

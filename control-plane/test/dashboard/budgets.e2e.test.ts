import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetWindow, RedisKeys } from '@gateway/shared';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { launch, openTab, poll, signIn } from './browser.js';

/**
 * A project's budgets on its card in a real headless Chromium against a real control plane: a
 * budget added from the form, its spend as a bar and in words with what is reserved and when it
 * resets (read from the ledger the proxies enforce with), its limit changed, and its deletion; each
 * change is checked through the management API as well.
 */
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashbudgets');
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const NANOS = 1_000_000_000;

type Styled = { getComputedStyle(el: unknown): { backgroundColor: string; borderLeftWidth: string; paddingLeft: string } };
const fillColour = (el: unknown) => (globalThis as unknown as Styled).getComputedStyle(el).backgroundColor;
/** A budget is a line of the list, not a boxed banner: no border, no padding of its own. */
const boxOf = (el: unknown) => {
  const style = (globalThis as unknown as Styled).getComputedStyle(el);
  return `${style.borderLeftWidth} ${style.paddingLeft}`;
};

/** The budgets' wall-clock form in the browser's zone (UTC): 2026-03-02 00:00:00. */
function shown(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

describe('budgets on the project card', () => {
  it('adds a budget, shows its progress and reset, changes its limit and deletes it', { timeout: 120_000 }, async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'Budgeted' } });
    expect(project.status).toBe(201);
    const projectId: string = project.body.id;
    const budgetsOf = async () => (await h.api('GET', `/v1/projects/${projectId}/budgets`, { token: h.adminToken })).body.data as Record<string, unknown>[];

    const { context, page, problems } = await openTab(browser, 'wide');
    await page.goto(`${h.base}/projects?q=Budgeted`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    const panel = page.getByRole('region', { name: 'Budgets of Budgeted' });
    // Added once the list has loaded, as a user sees it.
    await poll(() => panel.textContent()).toContain('No spending budget.');

    await panel.getByRole('button', { name: 'Add a budget to Budgeted' }).click();
    await panel.getByLabel('Limit (US$)').fill('5');
    await panel.getByLabel('Period').fill('day');
    await panel.getByLabel('Time zone').fill('UTC');
    await panel.getByLabel('Alert at (fractions)').fill('0.5, 1');
    await panel.getByRole('button', { name: 'Add budget' }).click();
    await poll(() => budgetsOf()).toHaveLength(1);
    const [made] = await budgetsOf();
    expect(made).toMatchObject({ scope: 'project', key_id: null, tag: null, limit_usd: 5, period: 'day', timezone: 'UTC', alert_at: [0.5, 1], spent_usd: 0, reserved_usd: 0 });
    const budgetId = made!.id as string;
    const resetsAt = made!.resets_at as string;
    expect(resetsAt).toMatch(/T00:00:00\.000Z$/);

    const row = panel.getByRole('listitem');
    await poll(() => row.count()).toBe(1);
    await poll(() => row.textContent()).toContain('$5.00 per day (UTC) · whole project');
    expect(await row.textContent()).toContain(`$0.00 spent of $5.00 · resets ${shown(resetsAt)}`);
    const okColour = await row.locator('.quota-fill').evaluate(fillColour);
    const okBox = await row.evaluate(boxOf);

    // Spend and a proxy's lease in the ledger the proxies enforce with, which the API and the card read.
    const window = budgetWindow({ period: 'day', timezone: 'UTC', created_at: Date.parse(made!.created_at as string) }, Date.now());
    const ledger = new RedisKeys(h.prefix).budgetLedger(projectId, budgetId, window.id);
    await h.redis.hset(ledger, { spent: String(4.25 * NANOS), 'lease:replica-a': String(0.5 * NANOS), 'exp:replica-a': String(Date.now() + 10 * 60_000) });
    expect(await h.api('GET', `/v1/projects/${projectId}/budgets/${budgetId}`, { token: h.adminToken })).toMatchObject({ body: { spent_usd: 4.25, reserved_usd: 0.5 } });
    await page.reload();
    await poll(() => row.textContent()).toContain(`⚠ Near budget (85%) · $4.25 spent of $5.00 ($0.50 reserved) · resets ${shown(resetsAt)}`);
    // 85 %: past 80 %, the bar in the warning colour, the line laid out as before.
    expect(await row.locator('.quota-fill').getAttribute('style')).toMatch(/width: 85(\.0)?%/);
    const warningColour = await row.locator('.quota-fill').evaluate(fillColour);
    expect(warningColour).not.toBe(okColour);
    expect(await row.evaluate(boxOf)).toBe(okBox);

    // A lower limit applies to the spend so far: the budget is now exhausted.
    const limit = row.getByLabel('Limit (US$)');
    await poll(() => limit.inputValue()).toBe('5');
    await limit.fill('4');
    await row.getByRole('button', { name: 'Save' }).click();
    await poll(async () => (await budgetsOf())[0]?.limit_usd).toBe(4);
    expect((await budgetsOf())[0]).toMatchObject({ id: budgetId, period: 'day', spent_usd: 4.25 });
    await poll(() => row.textContent()).toContain(`✕ Budget reached · $4.25 spent of $4.00 ($0.50 reserved) · resets ${shown(resetsAt)}`);
    expect(await row.locator('.quota-fill').getAttribute('style')).toMatch(/width: 100(\.0)?%/);
    const exhaustedColour = await row.locator('.quota-fill').evaluate(fillColour);
    expect(exhaustedColour).not.toBe(okColour);
    expect(exhaustedColour).not.toBe(warningColour);

    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this budget?' });
    await dialog.getByRole('button', { name: 'Delete budget' }).click();
    await poll(() => budgetsOf()).toEqual([]);
    expect((await h.api('GET', `/v1/projects/${projectId}/budgets/${budgetId}`, { token: h.adminToken })).status).toBe(404);
    await poll(() => panel.textContent()).toContain('No spending budget.');
    expect(await row.count()).toBe(0);

    expect(problems).toEqual([]);
    await context.close();
  });
});

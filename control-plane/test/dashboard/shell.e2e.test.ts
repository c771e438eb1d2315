import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectFitsViewport, goTo, heading, launch, openTab, poll, shot, shotFor, signIn, storageContents, watchedPage, type SizeName } from './browser.js';

/**
 * The dashboard's shell in Chromium, at 1440×900 and 390×844: the session survives a reload and
 * a new tab through the httpOnly cookie and ends with sign-out; field problems show on their field
 * and clear as it changes; the my-account menu changes the password; the navigation is one row on
 * a wide screen and folds behind a Menu button on a phone; dark mode.
 */
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashshell');
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const SIZES: SizeName[] = ['wide', 'phone'];

async function sessionCookie(page: Page) {
  return (await page.context().cookies()).find((c) => c.name === 'gateway_session');
}

describe.each(SIZES)('at the %s size', (size) => {
  it('keeps the session through a reload and in a new tab, and sign-out ends it everywhere', { timeout: 60_000 }, async () => {
    const user = await h.createUser();
    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/usage`);
    expect(await heading(page)).toBe('Sign in');
    await shotFor(page, 'signin', size);
    await signIn(page, user.email, user.password);
    await poll(() => heading(page)).toBe('Usage');

    // The cookie: httpOnly (so the page's scripts see nothing), strict, for the sign-in route only.
    const cookie = await sessionCookie(page);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/v1/signins' });
    expect(await storageContents(page)).toBe('{"local":{},"session":{},"cookie":""}');

    await page.reload();
    await poll(() => heading(page)).toBe('Usage');
    expect(await page.getByRole('button', { name: `My account: ${user.email}` }).isVisible()).toBe(true);

    const second = await watchedPage(context, problems);
    await second.goto(`${h.base}/projects`);
    await poll(() => heading(second)).toBe('Projects');
    await expectFitsViewport(second, 'projects');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await poll(() => heading(page)).toBe('Sign in');
    expect(await page.getByRole('status').filter({ hasText: 'You signed out.' }).count()).toBe(1);
    expect(await sessionCookie(page)).toBeUndefined();
    await page.reload();
    await poll(() => heading(page)).toBe('Sign in');
    // The other tab's session was the same one: its next call is refused and it says so.
    await goTo(second, 'Audit');
    await poll(() => heading(second)).toBe('Sign in');
    expect(await second.getByRole('status').filter({ hasText: 'Your session ended.' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows problems on their fields in words, clears them on edit, and changes the password from the account menu', { timeout: 60_000 }, async () => {
    const user = await h.createUser();
    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const emailProblem = page.locator('#signin-email-problem');
    await poll(() => emailProblem.textContent()).toContain('Enter the email you sign in with.');
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Email').getAttribute('aria-describedby')).toContain('signin-email-problem');
    await page.getByLabel('Email').fill(user.email);
    expect(await emailProblem.count()).toBe(0);
    await signIn(page, user.email, user.password);

    const toggle = page.getByRole('button', { name: `My account: ${user.email}` });
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    await expectFitsViewport(page, 'account menu open');
    await shotFor(page, 'account-menu', size, { fullPage: false });
    await page.getByRole('button', { name: 'Change password' }).click();
    const dialog = page.getByRole('dialog', { name: 'Change your password' });
    await poll(() => dialog.isVisible()).toBe(true);

    // The server's refusals, on the fields they concern.
    await dialog.getByLabel('Current password').fill('not the password');
    await dialog.getByLabel('New password', { exact: true }).fill('short');
    await dialog.getByLabel('New password again').fill('short');
    await dialog.getByRole('button', { name: 'Change password' }).click();
    const newProblem = dialog.locator('#pw-new-problem');
    await poll(() => newProblem.textContent()).toContain('Use at least 12 characters.');
    await dialog.getByLabel('New password', { exact: true }).fill('a new passphrase here');
    expect(await newProblem.count()).toBe(0);
    await dialog.getByLabel('New password again').fill('a new passphrase here');
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await poll(() => dialog.locator('#pw-current-problem').textContent()).toContain('The current password is wrong.');
    await dialog.getByLabel('New password again').fill('something else entirely');
    await dialog.getByLabel('Current password').fill(user.password);
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await poll(() => dialog.locator('#pw-again-problem').textContent()).toContain('The two new passwords differ.');
    // The dialog's buttons stay on the screen, phone included.
    const box = await dialog.getByRole('button', { name: 'Change password' }).boundingBox();
    const viewport = page.viewportSize();
    expect(box !== null && viewport !== null && box.x >= 0 && box.x + box.width <= viewport.width && box.y + box.height <= viewport.height).toBe(true);
    await shotFor(page, 'password-dialog', size, { fullPage: false });
    await dialog.getByLabel('New password again').fill('a new passphrase here');
    await dialog.getByRole('button', { name: 'Change password' }).click();
    await poll(() => dialog.isVisible()).toBe(false);
    await poll(() => page.locator('.toasts').textContent()).toContain('Password changed.');

    // Still signed in, in a new session under the new password, which a reload keeps.
    await page.reload();
    await poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    expect((await h.api('POST', '/v1/signins', { body: { grant_type: 'password', email: user.email, password: 'a new passphrase here' } })).status).toBe(200);
    expect((await h.api('GET', '/v1/users/me', { token: user.token })).status).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('fits the navigation and every page into the window, light and dark', { timeout: 90_000 }, async () => {
    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByRole('button', { name: /^Menu/ });
    type Box = { top: number; left: number; right: number; bottom: number };
    const boxes = () => nav.getByRole('link').evaluateAll((els) => els.map((el) => (el as unknown as { getBoundingClientRect(): Box }).getBoundingClientRect()));
    const width = await page.evaluate(() => (globalThis as unknown as { innerWidth: number }).innerWidth);
    /** On a phone the navigation is behind the Menu button: open it first. */
    const openNav = async () => {
      if (size !== 'phone') return;
      if ((await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
      await poll(() => menu.getAttribute('aria-expanded')).toBe('true');
    };
    if (size === 'phone') {
      // Folded: no row of links running off the edge, a Menu button that says which page is open.
      expect(await nav.count()).toBe(0);
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.textContent()).toContain('on Projects');
      // Escape folds it again, with focus back on the button.
      await openNav();
      await page.keyboard.press('Escape');
      await poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
      await openNav();
    } else {
      expect(await menu.isVisible()).toBe(false);
    }
    const links = await nav.getByRole('link').allTextContents();
    expect(links).toEqual(['Projects', 'API keys', 'Webhooks', 'Guardrails', 'Usage', 'Batches', 'Audit', 'Members', 'Accounts']);
    const placed = await boxes();
    // Every entry whole on the screen, none clipped at an edge.
    for (const box of placed) expect(box.left >= 0 && box.right <= width, JSON.stringify(box)).toBe(true);
    // Wide: one row (every top edge the same). Phone: one entry per line, all in view.
    expect(new Set(placed.map((b) => Math.round(b.top))).size).toBe(size === 'phone' ? links.length : 1);
    if (size === 'phone') await shot(page, 'navigation-phone', { fullPage: false });
    for (const name of links) {
      await openNav();
      await nav.getByRole('link', { name }).click();
      await poll(() => heading(page)).toBe(name);
      // A page chosen folds the menu away again.
      if (size === 'phone') await poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      await page.waitForLoadState('networkidle');
      await expectFitsViewport(page, name);
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectFitsViewport(page, `${name} (dark)`);
      await page.emulateMedia({ colorScheme: 'light' });
    }
    // Dark mode swaps the palette: the page background and text colours change.
    const colours = () => page.evaluate(() => {
      const g = globalThis as unknown as { getComputedStyle(el: unknown): { backgroundColor: string; color: string }; document: { body: unknown } };
      const style = g.getComputedStyle(g.document.body);
      return `${style.backgroundColor} ${style.color}`;
    });
    const light = await colours();
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await colours()).not.toBe(light);
    expect(await colours()).toBe('rgb(15, 20, 25) rgb(230, 233, 237)');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(problems).toEqual([]);
    await context.close();
  });
});

it('keeps Accounts out of the navigation for accounts that are not account admins', { timeout: 30_000 }, async () => {
  const user = await h.createUser();
  const { context, page } = await openTab(browser, 'wide');
  await page.goto(`${h.base}/accounts`);
  await signIn(page, user.email, user.password);
  expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Accounts' }).count()).toBe(0);
  await poll(() => heading(page)).toBe('Page not found');
  await context.close();
});

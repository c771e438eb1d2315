import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from '../../../test-support/processes.js';

/**
 * Chromium for the dashboard's end-to-end tests: launch flags, the two screen sizes every flow is
 * checked at, screenshots (into docs/screenshots only with UPDATE_SCREENSHOTS=1) and the in-page
 * checks they share.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(tmpdir(), 'gateway-dashboard-screenshots');

export const SIZES = {
  wide: { width: 1440, height: 900 },
  phone: { width: 390, height: 844 },
} as const;
export type SizeName = keyof typeof SIZES;

/** Browser globals the in-page checks read (this file is compiled without the DOM library). */
export interface InPage {
  document: {
    cookie: string;
    documentElement: { scrollWidth: number };
    querySelector(selector: string): { style: { setProperty(name: string, value: string): void } } | null;
  };
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  innerWidth: number;
}

export async function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  // A browser that cannot start fails the test: the dashboard would go untested otherwise.
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors seen so far (a 401/403/404 provoked on purpose excepted). */
  problems: string[];
}

export async function openTab(browser: Browser, size: SizeName, options: { dark?: boolean } = {}): Promise<Tab> {
  const context = await browser.newContext({
    viewport: SIZES[size],
    locale: 'en-US',
    timezoneId: 'UTC',
    reducedMotion: 'reduce',
    colorScheme: options.dark ? 'dark' : 'light',
  });
  const problems: string[] = [];
  const page = await watchedPage(context, problems);
  return { context, page, problems };
}

export async function watchedPage(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of (400|401|403|404|409)/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return page;
}

/** The page is no wider than the window: nothing scrolls sideways but what scrolls inside itself. */
export async function expectFitsViewport(page: Page, what: string): Promise<void> {
  const widths = await page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return { scroll: document.documentElement.scrollWidth, inner: innerWidth };
  });
  expect(widths.scroll, `${what}: page ${widths.scroll}px wide in a ${widths.inner}px window`).toBeLessThanOrEqual(widths.inner);
}

export async function storageContents(page: Page): Promise<string> {
  return page.evaluate(() => {
    const { localStorage, sessionStorage, document } = globalThis as unknown as InPage;
    return JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie });
  });
}

export async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  // Let the layout settle so the picture shows the page, not a transition.
  await page.waitForTimeout(150);
  const hideToasts = (hidden: boolean) =>
    page.evaluate((hidden) => (globalThis as unknown as InPage).document.querySelector('.toasts')?.style.setProperty('visibility', hidden ? 'hidden' : ''), hidden);
  await hideToasts(true);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
  await hideToasts(false);
}

/** `<page>-wide`, `<page>-phone` and (taken at the wide size in dark mode) `<page>-dark`. */
export async function shotFor(page: Page, name: string, size: SizeName, options: { fullPage?: boolean } = {}): Promise<void> {
  await shot(page, `${name}-${size}`, options);
  if (size !== 'wide') return;
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, `${name}-dark`, options);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Follows a link of the main navigation, opening the Menu first where the navigation folds behind it (a phone). */
export async function goTo(page: Page, name: string): Promise<void> {
  const menu = page.getByRole('button', { name: /^Menu/ });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
}

export function heading(page: Page): Promise<string | null> {
  return page.getByRole('heading', { level: 1 }).textContent();
}

/**
 * expect.poll with room for the server's password hashing (scrypt) on a busy machine: the default
 * second is too short for a sign-in or a password change while other tests run.
 */
export function poll<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 15_000 });
}

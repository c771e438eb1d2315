import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from '../../../test-support/processes.js';

/**
 * What the projects and keys end-to-end tests share: Chromium with the flags of
 * dashboard.e2e.test.ts, the two screen sizes every flow runs at, sign-in, the sideways-scroll
 * check and screenshots (into docs/screenshots only with UPDATE_SCREENSHOTS=1).
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

export const VIEWPORTS = [
  { label: 'wide', width: 1440, height: 900 },
  { label: 'phone', width: 390, height: 844 },
] as const;
export type Viewport = (typeof VIEWPORTS)[number];

/** Browser globals the in-page checks read (this file is type-checked without the DOM library). */
export interface InPage {
  document: {
    activeElement: { tagName: string; textContent: string | null; id: string; getAttribute(name: string): string | null } | null;
    documentElement: { scrollWidth: number };
    querySelector(selector: string): { style: { setProperty(name: string, value: string): void } } | null;
  };
  navigator: { clipboard: { readText(): Promise<string> } };
  innerWidth: number;
}

export async function launch(): Promise<Browser> {
  // A browser that cannot start fails the test: the dashboard would go untested otherwise.
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface OpenPage {
  context: BrowserContext;
  page: Page;
  /** Script errors and failed requests the test did not provoke. */
  problems: string[];
}

export async function openPage(browser: Browser, base: string, viewport: Viewport, options: { dark?: boolean } = {}): Promise<OpenPage> {
  mkdirSync(SHOTS, { recursive: true });
  const context = await browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    locale: 'en-US',
    timezoneId: 'UTC',
    reducedMotion: 'reduce',
    colorScheme: options.dark ? 'dark' : 'light',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of (401|403|404)/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { context, page, problems };
}

export async function signIn(page: Page, base: string, path: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}${path}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 10_000 }).toBe(true);
}

/** The page never scrolls sideways: only tables scroll, inside their own frame. */
export async function expectNoSidewaysScroll(page: Page, where: string): Promise<void> {
  const widths = await page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return { scroll: document.documentElement.scrollWidth, inner: innerWidth };
  });
  expect(widths.scroll, `${where}: page width ${widths.scroll} > viewport ${widths.inner}`).toBeLessThanOrEqual(widths.inner);
}

/** The element is fully on screen horizontally: nothing of it is cut off at either edge. */
export async function expectWithinViewport(page: Page, locator: ReturnType<Page['locator']>, what: string): Promise<void> {
  const box = await locator.boundingBox();
  const width = page.viewportSize()?.width ?? 0;
  expect(box, `${what} has no box`).not.toBeNull();
  expect(box!.x, `${what} starts off-screen`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what} ends past the right edge (${width})`).toBeLessThanOrEqual(width);
}

export function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = (globalThis as unknown as InPage).document.activeElement;
    return el === null ? 'none' : `${el.tagName.toLowerCase()}:${(el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.id}`;
  });
}

export async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await page.waitForTimeout(150);
  // Confirmations of earlier steps would cover the page they are not about.
  const hideToasts = (hidden: boolean) =>
    page.evaluate((hidden) => (globalThis as unknown as InPage).document.querySelector('.toasts')?.style.setProperty('visibility', hidden ? 'hidden' : ''), hidden);
  await hideToasts(true);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
  await hideToasts(false);
}

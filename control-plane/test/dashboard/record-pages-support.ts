import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { ROOT } from '../../../test-support/processes.js';
import type { Harness } from '../harness.js';

/**
 * What the usage and audit pages' browser tests share: Chromium's flags, the two screen sizes,
 * screenshots (into docs/screenshots only with UPDATE_SCREENSHOTS=1), the in-page checks, and
 * records written straight into PostgreSQL as the writer would, at chosen times, so ranges and
 * presets have known contents.
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
export const WIDE = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** The browser globals the in-page checks read (this file is type-checked without the DOM library). */
interface InPage {
  document: {
    documentElement: { scrollWidth: number };
    querySelector(selector: string): { style: { setProperty(name: string, value: string): void } } | null;
    querySelectorAll(selector: string): ArrayLike<{ scrollWidth: number; clientWidth: number }>;
    body: { innerText: string };
  };
  innerWidth: number;
}

/** A whole page, or with `fullPage: false` the screen as it is (for a panel over the page). */
export async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.waitForTimeout(150);
  const hideToasts = (hidden: boolean) =>
    page.evaluate((hidden) => (globalThis as unknown as InPage).document.querySelector('.toasts')?.style.setProperty('visibility', hidden ? 'hidden' : ''), hidden);
  await hideToasts(true);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
  await hideToasts(false);
}

/** The page wider than the screen, or a table frame scrolling sideways inside it. */
export function sideways(page: Page): Promise<{ page: boolean; frames: boolean }> {
  return page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as InPage;
    return {
      page: document.documentElement.scrollWidth > innerWidth,
      frames: Array.from(document.querySelectorAll('.table-scroll')).some((frame) => frame.scrollWidth > frame.clientWidth + 1),
    };
  });
}

export function visibleText(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as unknown as InPage).document.body.innerText);
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 10_000 }).toBe(true);
}

/** Collects script errors and console errors, except the failed requests a test provokes. */
export function watchProblems(page: Page, allowed: RegExp = /status of (401|403|404|500)/): string[] {
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !allowed.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return problems;
}

export interface UsageSeed {
  ts: number;
  project_id: string;
  key_id: string;
  model: string;
  provider: string;
  tokens?: number;
  cost?: string | null;
  finish_reason?: string;
}

export async function insertUsage(h: Harness, rows: UsageSeed[]): Promise<void> {
  const full = rows.map((r) => ({
    ts: r.ts,
    id: randomUUID(),
    request_id: `req-${randomUUID()}`,
    project_id: r.project_id,
    key_id: r.key_id,
    model: r.model,
    provider: r.provider,
    input_tokens: Math.floor((r.tokens ?? 100) * 0.6),
    output_tokens: (r.tokens ?? 100) - Math.floor((r.tokens ?? 100) * 0.6),
    total_tokens: r.tokens ?? 100,
    cached_tokens: 0,
    cost_usd: r.cost ?? null,
    latency_ms: 120,
    finish_reason: r.finish_reason ?? 'stop',
    provider_finish_reason: null,
    stream: false,
    endpoint: 'chat.completions',
  }));
  await h.sql`insert into usage_records ${h.sql(full)}`;
}

export interface AuditSeed {
  ts: number;
  project_id: string | null;
  type: string;
  outcome: string;
  status: number;
  key_id?: string | null;
  actor?: string | null;
  model?: string | null;
  error_code?: string | null;
  user_agent?: string | null;
}

export async function insertAudit(h: Harness, rows: AuditSeed[]): Promise<void> {
  const full = rows.map((r) => ({
    ts: r.ts,
    id: randomUUID(),
    request_id: `req-${randomUUID()}`,
    type: r.type,
    outcome: r.outcome,
    status: r.status,
    error_code: r.error_code ?? null,
    project_id: r.project_id,
    key_id: r.key_id ?? null,
    actor: r.actor ?? null,
    model: r.model ?? null,
    provider: r.model ? 'mock' : null,
    client_ip: '203.0.113.7',
    user_agent: r.user_agent ?? 'OpenAI/Python 1.55.0',
    latency_ms: 42,
    endpoint: r.type === 'gateway.request' ? 'chat.completions' : null,
    attempts: r.model ? 1 : 0,
    providers: r.model ? ['mock'] : [],
  }));
  await h.sql`insert into audit_events ${h.sql(full)}`;
}

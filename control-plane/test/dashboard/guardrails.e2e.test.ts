import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { launch, openTab, poll, signIn } from './browser.js';

/**
 * The Guardrails page end to end in a real headless Chromium against a real control plane: a list
 * saved from the JSON editor reaches the API, an invalid one is refused naming the guardrail, and
 * the test box shows what the draft list finds and masks.
 */
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashguard');
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('guardrails page', () => {
  it('saves the list, refuses an invalid one naming it, and tests a text', { timeout: 120_000 }, async () => {
    const project = await h.api('POST', '/v1/projects', { token: h.adminToken, body: { name: 'Guarded' } });
    const projectId: string = project.body.id;
    const { context, page, problems } = await openTab(browser, 'wide');
    await page.goto(`${h.base}/guardrails?project=${projectId}`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Guardrails');

    // Typed once the page has settled (the session, the project list and the saved list loaded), as a user sees it.
    await page.waitForLoadState('networkidle');
    await poll(() => page.getByRole('region', { name: 'Checks on prompts and answers, in order' }).getAttribute('aria-busy')).toBe('false');
    const editor = page.getByLabel('Guardrails (JSON list; empty: none)');
    const invalid = '[{"id":"twice","stage":"input","type":"regex","action":"block","patterns":["(a)\\\\1"]}]';
    await editor.fill(invalid);
    // What was typed is what gets saved: nothing that loads afterwards replaces it.
    await poll(() => editor.inputValue()).toBe(invalid);
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.getByRole('alert').textContent()).toMatch(/Saving the guardrails failed: guardrail twice: patterns\[0\] is not valid RE2 syntax \(invalid escape sequence: \\1\)/);

    const list = [{ id: 'contacts', stage: 'input', type: 'pii', action: 'mask', entities: ['email'] }];
    await editor.fill(JSON.stringify(list));
    await poll(() => editor.inputValue()).toBe(JSON.stringify(list));
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(async () => (await h.api('GET', `/v1/projects/${projectId}/guardrails`, { token: h.adminToken })).body.data).toEqual(list);

    await page.getByRole('textbox', { name: 'Text' }).fill('write to ann@example.com');
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await poll(() => page.getByRole('status', { name: 'Test result' }).textContent()).toContain('write to <EMAIL_1>');
    // The refused save is a 400 the browser logs; nothing else may go wrong.
    expect(problems.filter((p) => !p.includes('400'))).toEqual([]);
    await context.close();
  });
});

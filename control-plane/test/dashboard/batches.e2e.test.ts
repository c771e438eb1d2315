import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeLineResults } from '../../src/db/batches.js';
import type { Db } from '../../src/db/connect.js';
import { answer, makeBatch, newProjectWithKey } from '../batch-fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startHarness, type Harness } from '../harness.js';
import { expectFitsViewport, launch, openTab, poll, shotFor, signIn, type SizeName } from './browser.js';

/**
 * The Batches page in a real headless Chromium at 1440×900 and 390×844 against a real control
 * plane, on batches made through the db functions the proxies' internal routes call: each batch
 * with its status, progress and times, the output and error lines downloaded through the
 * management routes (the file saved is what the API serves), the buttons of a file with no line
 * left disabled, a running batch's progress moving on without a reload, and a running batch
 * cancelled after a confirmation.
 */
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness('dashbatches');
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Neither the page nor the table frame scrolls sideways. */
async function expectNothingSideways(page: Page, what: string): Promise<void> {
  await expectFitsViewport(page, what);
  const frames = await page.evaluate(() =>
    Array.from((globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ scrollWidth: number; clientWidth: number }> } }).document.querySelectorAll('.table-scroll')).filter(
      (frame) => frame.scrollWidth > frame.clientWidth + 1,
    ).length,
  );
  expect(frames, `${what}: table frames scrolling sideways`).toBe(0);
}

describe.each(['wide', 'phone'] as SizeName[])('the Batches page (%s)', (size) => {
  it('lists the batches with their progress, downloads their lines and follows a running one', { timeout: 120_000 }, async () => {
    const name = `Batched ${size}`;
    const { project, key } = await newProjectWithKey(h, name);
    const done = await makeBatch(h, project, key, { lines: 3, answers: [answer(0), answer(1, 429), answer(2)], finish: { outcome: 'completed' } });
    const running = await makeBatch(h, project, key, { api: 'anthropic', lines: 4, answers: [answer(0)] });
    await h.sql`update batches set created_at = now() - interval '1 minute' where id = ${done.id}`;
    const served = async (id: string, which: string) => (await h.api('GET', `/v1/projects/${project}/batches/${id}/${which}`, { token: h.adminToken })).text;

    const { context, page, problems } = await openTab(browser, size);
    await page.goto(`${h.base}/batches?project=${project}`);
    await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Batches');
    const list = page.getByRole('region', { name: `Batches of “${name}”` });
    const rows = list.getByRole('row').filter({ has: page.getByRole('rowheader') });
    await poll(() => rows.count()).toBe(2);
    // Newest first.
    expect(await rows.nth(0).getByRole('rowheader').textContent()).toContain(running.id);
    const doneRow = rows.filter({ hasText: done.id });
    const runningRow = rows.filter({ hasText: running.id });
    expect(await doneRow.textContent()).toContain('✓ completed');
    expect(await doneRow.textContent()).toContain('2 completed · 1 failed of 3');
    expect(await doneRow.textContent()).toContain('Batch API · /v1/chat/completions');
    expect(await doneRow.getByRole('rowheader').textContent()).toContain(`Key ${key.slice(0, 8)}…`);
    expect(await runningRow.textContent()).toContain('in progress');
    expect(await runningRow.textContent()).toContain('Message Batches');
    expect(await runningRow.textContent()).toContain('1 completed · 0 failed of 4');
    expect(await runningRow.textContent()).toContain('Ends by');
    // Two thirds of the track completed, one third failed.
    expect(await doneRow.locator('.batch-fill-completed').getAttribute('style')).toMatch(/width: 66\.7%/);
    expect(await doneRow.locator('.batch-fill-failed').getAttribute('style')).toMatch(/width: 33\.3%/);
    await shotFor(page, 'batches', size);
    await expectNothingSideways(page, `batches (${size})`);

    for (const [which, label] of [
      ['output', 'Output'],
      ['errors', 'Errors'],
    ] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), doneRow.getByRole('button', { name: `${label} of batch ${done.id}` }).click()]);
      expect(download.suggestedFilename()).toBe(`${done.id}_${which === 'output' ? 'output' : 'error'}.jsonl`);
      expect(await readFile((await download.path())!, 'utf8')).toBe(await served(done.id, which));
    }
    await poll(() => page.getByText(`Saved ${done.id}_error.jsonl.`).isVisible()).toBe(true);
    // No line failed yet: nothing to download.
    expect(await runningRow.getByRole('button', { name: `Errors of batch ${running.id}` }).isDisabled()).toBe(true);
    expect(await runningRow.getByRole('button', { name: `Output of batch ${running.id}` }).isDisabled()).toBe(false);

    // The proxy stores more answers: the page reads the list again by itself while a batch runs.
    await (h.sql as unknown as Db).begin((tx) => storeLineResults(tx, running.id, [answer(1), answer(2, 500)]));
    await poll(() => runningRow.textContent()).toContain('2 completed · 1 failed of 4');
    expect(await runningRow.getByRole('button', { name: `Errors of batch ${running.id}` }).isDisabled()).toBe(false);

    // A running batch can be cancelled, after a confirmation; an ended one cannot.
    expect(await doneRow.getByRole('button', { name: `Cancel batch ${done.id}` }).count()).toBe(0);
    await runningRow.getByRole('button', { name: `Cancel batch ${running.id}` }).click();
    const dialog = page.getByRole('alertdialog', { name: `Cancel batch ${running.id}?` });
    await poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel batch' }).click();
    await poll(() => runningRow.textContent()).toContain('cancelling');
    expect(await runningRow.getByRole('button', { name: `Cancel batch ${running.id}` }).count()).toBe(0);
    expect((await h.sql<{ status: string }[]>`select status from batches where id = ${running.id}`)[0]?.status).toBe('cancelling');

    expect(problems).toEqual([]);
    await context.close();
  });
});

it('says when the project has no batches', { timeout: 60_000 }, async () => {
  const { project } = await newProjectWithKey(h, 'No batches');
  const { context, page, problems } = await openTab(browser, 'wide');
  await page.goto(`${h.base}/batches?project=${project}`);
  await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await poll(() => page.getByText('This project has no batches.').isVisible()).toBe(true);
  expect(problems).toEqual([]);
  await context.close();
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer, makeBatch, newProjectWithKey } from './batch-fixtures.js';
import { ctlInProcess } from './ctl-in-process.js';
import { startHarness, type Harness } from './harness.js';

/** `gatewayctl batches`, run in this process against a real control plane, on batches made through the db functions. */
let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness('ctlbatches');
  dir = mkdtempSync(join(tmpdir(), 'gatewayctl-batches-'));
});

afterAll(async () => {
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const ctl = (args: string[]) => ctlInProcess(h, dir, args);

describe('gatewayctl batches', () => {
  it('lists a project\'s batches by project name, as a table, JSON or CSV, a page or all of them', async () => {
    const { project, key } = await newProjectWithKey(h, 'ctl batches');
    const older = await makeBatch(h, project, key, { lines: 3, answers: [answer(0), answer(1, 500)], finish: { outcome: 'completed', unanswered: { status_code: 401, code: 'UNAUTHORIZED', message: 'The API key that made the batch was deleted.' } } });
    const newer = await makeBatch(h, project, key, { api: 'anthropic', lines: 4, answers: [answer(2)] });
    await h.sql`update batches set created_at = now() - interval '1 minute' where id = ${older.id}`;

    const table = await ctl(['batches', 'list', '--project', 'ctl batches', '-o', 'table']);
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID\s+API\s+STATUS\s+PROGRESS\s+CREATED\s+KEY$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(0, 4))).toEqual([
      [newer.id, 'anthropic', 'in_progress', '1/4'],
      [older.id, 'openai', 'completed', '3/3'],
    ]);
    expect(rows[1]).toContain(key);

    const json = await ctl(['batches', 'list', '--project', project]);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed).toMatchObject({ has_more: false, next_cursor: null, data: [{ id: newer.id }, { id: older.id, request_counts: { total: 3, completed: 1, failed: 2 } }] });

    const firstPage = await ctl(['batches', 'list', '--project', project, '--limit', '1', '-o', 'csv']);
    expect(firstPage.code, firstPage.stderr).toBe(0);
    expect(firstPage.stdout.split('\r\n')[0]).toMatch(/^id,project_id,api,endpoint,status,progress,request_counts\.total,/);
    expect(firstPage.stdout).toContain(newer.id);
    expect(firstPage.stdout).not.toContain(older.id);
    expect(firstPage.stderr).toContain(`--after ${newer.id}`);
    const next = JSON.parse((await ctl(['batches', 'list', '--project', project, '--limit', '1', '--after', newer.id])).stdout);
    expect(next.data.map((b: { id: string }) => b.id)).toEqual([older.id]);
    const all = JSON.parse((await ctl(['batches', 'list', '--project', project, '--limit', '1', '--all'])).stdout);
    expect(all).toEqual({ data: listed.data, next_cursor: null, has_more: false });
    const onlyOpenai = JSON.parse((await ctl(['batches', 'list', '--project', project, '--api', 'openai'])).stdout);
    expect(onlyOpenai.data.map((b: { id: string }) => b.id)).toEqual([older.id]);

    expect((await ctl(['batches', 'list'])).code).toBe(2);
    expect((await ctl(['batches', 'list', '--project', project, '--api', 'gemini'])).code).toBe(2);
    const unknown = await ctl(['batches', 'list', '--project', 'no such project']);
    expect(unknown.code).toBe(1);
  });

  it('shows one batch and writes its output or error lines to stdout as they are served', async () => {
    const { project, key } = await newProjectWithKey(h, 'ctl batch output');
    const batch = await makeBatch(h, project, key, { lines: 700, answers: Array.from({ length: 700 }, (_, i) => answer(i, i % 3 === 0 ? 429 : 200)), finish: { outcome: 'completed' } });

    const shown = await ctl(['batches', 'show', batch.id, '--project', 'ctl batch output', '-o', 'table']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^status\s+completed$/m);
    expect(shown.stdout).toMatch(/^progress\s+700\/700$/m);
    expect(shown.stdout).toMatch(/^request_counts\.failed\s+234$/m);
    expect(shown.stdout).toMatch(new RegExp(`^output_file_id\\s+${batch.output_file_id}$`, 'm'));
    expect(JSON.parse((await ctl(['batches', 'show', batch.id, '--project', project])).stdout)).toMatchObject({ id: batch.id, status: 'completed' });

    const served = (path: string) => h.api('GET', `/v1/projects/${project}/batches/${batch.id}/${path}`, { token: h.adminToken });
    const output = await ctl(['batches', 'output', batch.id, '--project', project]);
    expect(output.code, output.stderr).toBe(0);
    expect(output.stdout).toBe((await served('output')).text);
    expect(output.stdout.trimEnd().split('\n')).toHaveLength(466);
    // Whatever --output says: the lines are the file.
    const errors = await ctl(['batches', 'output', batch.id, '--project', project, '--errors', '-o', 'table']);
    expect(errors.code, errors.stderr).toBe(0);
    expect(errors.stdout).toBe((await served('errors')).text);
    expect(JSON.parse(errors.stdout.split('\n')[0]!)).toMatchObject({ custom_id: 'req-0', response: { status_code: 429 }, error: null });

    const missing = await ctl(['batches', 'output', 'batch_never_made', '--project', project]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('gatewayctl: No such batch. (NOT_FOUND, HTTP 404)\n');
    expect((await ctl(['batches', 'show', '--project', project])).code).toBe(2);
  });

  it('cancels a running batch, and says why it cannot cancel one that has ended', async () => {
    const { project, key } = await newProjectWithKey(h, 'ctl batch cancel');
    const running = await makeBatch(h, project, key, { lines: 2, answers: [answer(0)] });
    const cancelled = await ctl(['batches', 'cancel', running.id, '--project', 'ctl batch cancel', '-o', 'table']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/^status\s+cancelling$/m);
    const ended = await makeBatch(h, project, key, { lines: 1, answers: [answer(0)], finish: { outcome: 'completed' } });
    const late = await ctl(['batches', 'cancel', ended.id, '--project', project]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('(CONFLICT, HTTP 409)');
  });

  it('is in the help', async () => {
    const help = await ctl(['--help']);
    expect(help.stdout).toContain('batches output <batch id>');
    const group = await ctl(['batches', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/batches list .*batches show .*batches cancel .*batches output/s);
  });
});

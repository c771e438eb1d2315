import OpenAI, { toFile } from 'openai';
import type { Harness } from '../../control-plane/test/harness.js';
import { eventually } from '../../test-support/processes.js';

/** What the batch tests do with the official `openai` client: upload JSON lines, wait for a batch's end, read a file's lines. */
export async function uploadLines(client: OpenAI, lines: string[]): Promise<OpenAI.FileObject> {
  return client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'batch.jsonl'), purpose: 'batch' });
}

export async function batchEnded(client: OpenAI, id: string): Promise<OpenAI.Batch> {
  return eventually(async () => {
    const batch = await client.batches.retrieve(id);
    if (!['completed', 'failed', 'cancelled', 'expired'].includes(batch.status)) throw new Error(`batch is ${batch.status}`);
    return batch;
  }, 'the batch to end', 30_000);
}

export function jsonLines(text: string): Record<string, any>[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** A batch's usage records and audit events once every line's audit event has landed (`lines` of them). */
export async function batchRecords<U>(cp: Harness, projectId: string, batchId: string, lines: number): Promise<{ usage: U[]; audit: { type: string; status: number }[] }> {
  return eventually(async () => {
    const usage = await cp.api<{ data: U[] }>('GET', `/v1/usage?project_id=${projectId}&batch_id=${batchId}`, { token: cp.adminToken });
    const audit = await cp.api<{ data: { type: string; status: number }[] }>('GET', `/v1/audit?project_id=${projectId}&batch_id=${batchId}`, { token: cp.adminToken });
    if (audit.body.data.filter((e) => e.type === 'gateway.request').length < lines) throw new Error('records not landed yet');
    return { usage: usage.body.data, audit: audit.body.data };
  }, 'the batch records', 20_000);
}

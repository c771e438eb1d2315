import OpenAI, { toFile } from 'openai';
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

import { readFile } from 'node:fs/promises';
import { UsageError } from '../cli-errors.js';
import { arg, required, type CommandSpec } from '../command.js';
import type { Column } from '../output.js';
import { projectIdOf } from '../resolve.js';

/** A project's guardrails (docs/guardrails.md): shown as a table, replaced from a JSON file. */
interface GuardrailRow {
  id: string;
  stage: string;
  type: string;
  action: string;
  [field: string]: unknown;
}

const COLUMNS: Column<GuardrailRow>[] = [
  { field: 'id', get: (g) => g.id },
  { field: 'stage', get: (g) => g.stage },
  { field: 'type', get: (g) => g.type },
  { field: 'action', get: (g) => g.action },
  {
    field: 'detail',
    get: (g) =>
      g.type === 'regex' ? (g.patterns as string[]).join(' | ') : g.type === 'pii' ? (g.entities as string[]).join(',') : g.type === 'webhook' ? `${String(g.url)} (${String(g.failure_mode)})` : String(g.provider),
  },
];

async function readList(file: string): Promise<unknown> {
  const text = file === '-' ? await readStdin() : await readFile(file, 'utf8').catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

export const guardrailCommands: CommandSpec[] = [
  {
    path: ['guardrails', 'get'],
    args: ['<project>'],
    summary: "The project's guardrails, in the order they run",
    async run(ctx) {
      const api = await ctx.api();
      const answer = await api.get<{ data: GuardrailRow[] }>(`/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/guardrails`);
      ctx.out.list(answer, answer.data, COLUMNS);
    },
  },
  {
    path: ['guardrails', 'set'],
    args: ['<project>'],
    summary: "Replace the project's guardrails with the JSON list in --file (- for stdin); [] removes them",
    options: { file: { type: 'string', value: '<path|->', help: 'a JSON list of guardrails (docs/guardrails.md)' } },
    async run(ctx) {
      const list = await readList(required(ctx, 'file'));
      const api = await ctx.api();
      const answer = await api.send<{ data: GuardrailRow[] }>('PUT', `/v1/projects/${await projectIdOf(api, arg(ctx, 0))}/guardrails`, list);
      ctx.out.list(answer.body, answer.body.data, COLUMNS);
      const secrets = answer.body.data.filter((g) => typeof g.secret === 'string');
      for (const g of secrets) ctx.out.note(`Webhook guard "${g.id}": its signing secret is ${String(g.secret)} (shown this once).`);
    },
  },
];

import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireRequest } from '../../test-support/wire-mock.js';
import { agentWorkdir, runClaude, startAgentGateway, type AgentGateway } from './agent-cli.js';
import { answerChat } from './chat-wire-answer.js';

/**
 * The Claude Code CLI (the dev dependency's own binary, at its default settings and default model
 * id) through the gateway on both paths: natively to a provider speaking Anthropic's Messages
 * wire format, and translated to a `type: openai` provider serving `claude-*` whose mock speaks
 * Chat Completions. Each runs a tool loop: a turn that asks for a tool (Read), the CLI running it,
 * and the turn that answers from its result; every turn leaves one usage record and one audit event.
 */
const NOTE = 'the gateway carried this note';
/** The directory the CLI runs in (the tool call reads its note.txt). */
let workDir = '';

function sse(res: ServerResponse, events: [string, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function noteSays(content: unknown): string {
  return `The note says: ${JSON.stringify(content).includes(NOTE) ? NOTE : 'nothing I could read'}`;
}

/** Anthropic's wire format: a tool result in the last user turn, answer from it; else ask to read the note. */
function anthropicAnswer(req: WireRequest, res: ServerResponse, seen: readonly WireRequest[]): void {
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages[messages.length - 1];
  const blocks = Array.isArray(last?.content) ? (last.content as { type: string; content?: unknown }[]) : [];
  const result = blocks.find((b) => b.type === 'tool_result');
  const start: [string, unknown] = ['message_start', { type: 'message_start', message: { id: `msg_${seen.length}`, type: 'message', role: 'assistant', model: req.body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } }];
  if (result === undefined) {
    return sse(res, [
      start,
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ file_path: join(workDir, 'note.txt') }) } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
  }
  sse(res, [
    start,
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: noteSays(result.content) } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

/** Chat Completions: a tool message last, answer from it; else call Read. */
function chatAnswer(req: WireRequest, res: ServerResponse): void {
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.at(-1);
  if (last?.role !== 'tool') return answerChat(req, res, { call: { id: 'call_read_1', name: 'Read', arguments: JSON.stringify({ file_path: join(workDir, 'note.txt') }) } });
  answerChat(req, res, { text: noteSays(last.content) });
}

let native: AgentGateway;
let translated: AgentGateway;

beforeAll(async () => {
  native = await startAgentGateway(
    'claude-code',
    (url) => `providers:
  - name: anthropic
    type: anthropic
    base_url: ${url}
    api_key: sk-ant-provider-secret-0123456789
    models: ["claude-*"]
`,
    anthropicAnswer,
  );
  translated = await startAgentGateway(
    'claude-code-translated',
    (url) => `providers:
  - name: openai
    type: openai
    base_url: ${url}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: ["claude-*"]
`,
    chatAnswer,
  );
});

afterAll(async () => {
  await native?.stop();
  await translated?.stop();
});

/** Claude Code asked what note.txt says, through `gw`; the turns the provider answered. */
async function toolLoop(gw: AgentGateway, path: string): Promise<WireRequest[]> {
  const { cwd, home } = agentWorkdir('gw-claude-');
  writeFileSync(join(cwd, 'note.txt'), `${NOTE}\n`);
  workDir = cwd;
  const run = await runClaude(gw.h.url, gw.key.key, 'What does note.txt say?', cwd, home);
  expect(run.code, run.stderr + run.stdout).toBe(0);
  const result = JSON.parse(run.stdout) as { result: string; is_error: boolean };
  expect(result.is_error).toBe(false);
  expect(result.result).toContain(NOTE);
  const turns = gw.seen.filter((r) => r.path.startsWith(path) && !r.path.startsWith('/v1/messages/count_tokens'));
  expect(turns.length).toBeGreaterThanOrEqual(2);
  for (const turn of turns) expect(JSON.stringify(turn.headers)).not.toContain(gw.key.key);
  return turns;
}

/** One usage record and one successful audit event per turn the provider answered. */
async function oneRecordPerTurn(gw: AgentGateway, turns: number, provider: string) {
  const { usage, audit } = await gw.h.records();
  const records = usage.filter((u) => u.endpoint === 'messages');
  expect(records).toHaveLength(turns);
  for (const record of records) expect(record).toMatchObject({ provider, endpoint: 'messages' });
  const events = audit.filter((a) => a.endpoint === 'messages');
  expect(events).toHaveLength(turns);
  for (const event of events) expect(event).toMatchObject({ status: 200, outcome: 'success' });
  return records;
}

describe('Claude Code through the gateway', () => {
  it('completes a tool loop on the native Messages path, one usage record and one audit event per turn', async () => {
    const turns = await toolLoop(native, '/v1/messages');
    for (const turn of turns) {
      // As the CLI sent it: its query string, betas and the fields only Anthropic's API knows.
      expect(turn.path).toBe('/v1/messages?beta=true');
      expect(turn.headers['anthropic-beta']).toContain('claude-code-');
      expect(turn.headers['x-api-key']).toBe('sk-ant-provider-secret-0123456789');
    }
    const first = turns[0]!.body;
    expect(first).toHaveProperty('context_management');
    expect(first).toHaveProperty('thinking');
    const records = await oneRecordPerTurn(native, turns.length, 'anthropic');
    // The CLI's user_id is JSON holding its session: the session is the end user.
    const session = (JSON.parse((first.metadata as { user_id: string }).user_id) as { session_id: string }).session_id;
    expect(records.every((u) => u.end_user === session)).toBe(true);
  });

  it('completes a tool loop translated to an OpenAI Chat Completions provider, one usage record and one audit event per turn', async () => {
    const turns = await toolLoop(translated, '/v1/chat/completions');
    for (const turn of turns) {
      expect(turn.headers.authorization).toBe('Bearer sk-openai-provider-secret-0123456789');
      // Translated: the Chat Completions shape, nothing only Anthropic's API knows.
      for (const field of ['context_management', 'thinking', 'output_config', 'metadata', 'system']) expect(turn.body).not.toHaveProperty(field);
      expect(turn.headers).not.toHaveProperty('anthropic-beta');
    }
    const loop = turns.filter((t) => Array.isArray(t.body.tools) && (t.body.tools as unknown[]).length > 0);
    expect(loop.length).toBeGreaterThanOrEqual(2);
    // Adaptive thinking at the CLI's effort; its system prompt first.
    expect(loop[0]!.body.reasoning_effort).toBe('medium');
    expect((loop[0]!.body.messages as { role: string }[])[0]?.role).toBe('system');
    expect((loop[0]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toContain('Read');
    expect(loop.some((t) => (t.body.messages as { role: string }[]).some((m) => m.role === 'tool')), 'a turn carried the tool result').toBe(true);
    const records = await oneRecordPerTurn(translated, turns.length, 'openai');
    for (const record of records) expect(record).toMatchObject({ tokens: { input: 120, output: 15 } });
  });
});

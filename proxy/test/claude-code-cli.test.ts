import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The Claude Code CLI (the dev dependency's own binary, at its default settings) through the
 * gateway to a provider speaking Anthropic's Messages wire format: a turn that asks for a tool
 * (Read), the CLI running it, and the turn that answers from its result. Every turn goes as the
 * CLI sent it (its betas, context management, adaptive thinking, effort) and leaves one usage
 * record and one audit event.
 */
const require = createRequire(import.meta.url);
/** The platform package's native binary (the wrapper's install script, which copies it, is not run). */
function claudeBinary(): string {
  const pkg = require.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`);
  return join(dirname(pkg), 'claude');
}

let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
const seen: WireRequest[] = [];
const NOTE = 'the gateway carried this note';
/** The directory the CLI runs in (the tool call reads its note.txt). */
let workDir = '';

function sse(res: ServerResponse, events: [string, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

/** A tool result in the last user turn: answer from it; else ask to read the note. */
function answer(req: WireRequest, res: ServerResponse): void {
  seen.push(req);
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages[messages.length - 1];
  const blocks = Array.isArray(last?.content) ? (last.content as { type: string; content?: unknown }[]) : [];
  const result = blocks.find((b) => b.type === 'tool_result');
  const id = `msg_${seen.length}`;
  const start: [string, unknown] = ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: req.body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } }];
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
  const text = `The note says: ${JSON.stringify(result.content).includes(NOTE) ? NOTE : 'nothing I could read'}`;
  sse(res, [
    start,
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

beforeAll(async () => {
  upstream = await startWireMock(answer);
  h = await startHarness(
    'claude-code',
    `providers:
  - name: anthropic
    type: anthropic
    base_url: ${upstream.baseUrl}
    api_key: sk-ant-provider-secret-0123456789
    models: ["claude-*"]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await upstream?.close();
});

function runClaude(prompt: string, cwd: string, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      claudeBinary(),
      ['-p', prompt, '--output-format', 'json'],
      {
        cwd,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          ANTHROPIC_BASE_URL: h.url,
          ANTHROPIC_API_KEY: key.key,
          // Nothing but the model calls leaves the machine (no telemetry, no update check).
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        },
      },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr }),
    );
  });
}

describe('Claude Code through the gateway', () => {
  it('completes a tool loop on the native Messages path, one usage record and one audit event per turn', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gw-claude-'));
    const home = join(cwd, '.home');
    mkdirSync(home);
    writeFileSync(join(cwd, 'note.txt'), `${NOTE}\n`);
    workDir = cwd;
    const run = await runClaude('What does note.txt say?', cwd, home);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const result = JSON.parse(run.stdout) as { result: string; is_error: boolean; num_turns: number };
    expect(result.is_error).toBe(false);
    expect(result.result).toContain(NOTE);

    const turns = seen.filter((r) => r.path.startsWith('/v1/messages') && !r.path.startsWith('/v1/messages/count_tokens'));
    expect(turns.length).toBeGreaterThanOrEqual(2);
    for (const turn of turns) {
      // As the CLI sent it: its query string, betas and the fields only Anthropic's API knows.
      expect(turn.path).toBe('/v1/messages?beta=true');
      expect(turn.headers['anthropic-beta']).toContain('claude-code-');
      expect(turn.headers['x-api-key']).toBe('sk-ant-provider-secret-0123456789');
      expect(JSON.stringify(turn.headers)).not.toContain(key.key);
    }
    const first = turns[0]!.body;
    expect(first).toHaveProperty('context_management');
    expect(first).toHaveProperty('thinking');
    const { usage, audit } = await h.records();
    const messages = usage.filter((u) => u.endpoint === 'messages');
    expect(messages).toHaveLength(turns.length);
    expect(audit.filter((a) => a.endpoint === 'messages')).toHaveLength(turns.length);
    for (const record of messages) expect(record).toMatchObject({ provider: 'anthropic', endpoint: 'messages' });
    for (const event of audit.filter((a) => a.endpoint === 'messages')) expect(event).toMatchObject({ status: 200, outcome: 'success' });
    // The CLI's user_id is JSON holding its session: the session is the end user.
    const session = (JSON.parse((first.metadata as { user_id: string }).user_id) as { session_id: string }).session_id;
    expect(messages.every((u) => u.end_user === session)).toBe(true);
  });
});

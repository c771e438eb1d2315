import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The OpenAI Codex CLI (the dev dependency's own binary, `codex exec` at its default settings,
 * with the gateway as its Responses provider) through the gateway to a provider entry with
 * `responses: native`, whose mock speaks OpenAI's Responses wire format: a turn that calls a tool
 * (Codex's `exec`, which runs in the CLI), and the turn that answers from its output. Every turn
 * goes as the CLI sent it (`client_metadata`, its tool items) and leaves one usage record and one
 * audit event.
 */
const require = createRequire(import.meta.url);
const TRIPLES: Record<string, string> = { 'linux-x64': 'x86_64-unknown-linux-musl', 'linux-arm64': 'aarch64-unknown-linux-musl' };
/** The platform package's binary, which the npm wrapper would start. */
function codexBinary(): string {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = require.resolve(`@openai/codex-${platform}/package.json`);
  return join(dirname(pkg), 'vendor', TRIPLES[platform] ?? platform, 'bin', 'codex');
}

let upstream: RunningWireMock;
let h: Harness;
let key: TestKey;
const seen: WireRequest[] = [];

function answer(req: WireRequest, res: ServerResponse): void {
  seen.push(req);
  const input = Array.isArray(req.body.input) ? (req.body.input as { type?: string; output?: unknown }[]) : [];
  const output = input.find((i) => i.type === 'custom_tool_call_output');
  const item =
    output === undefined
      ? { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec', input: 'text(6 * 7 + " from the isolate");' }
      : { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `The tool said: ${JSON.stringify(output.output).includes('42 from the isolate') ? '42' : 'nothing'}`, annotations: [] }] };
  const base = { id: `resp_${seen.length}`, object: 'response', created_at: 1, status: 'in_progress', model: req.body.model, output: [] };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const event = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence++ })}\n\n`);
  event({ type: 'response.created', response: base });
  event({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } });
  event({ type: 'response.output_item.done', output_index: 0, item });
  event({ type: 'response.completed', response: { ...base, status: 'completed', output: [item], usage: { input_tokens: 300, output_tokens: 12, total_tokens: 312, input_tokens_details: { cached_tokens: 100 }, output_tokens_details: { reasoning_tokens: 0 } } } });
  res.end();
}

beforeAll(async () => {
  upstream = await startWireMock(answer);
  h = await startHarness(
    'codex',
    `providers:
  - name: openai
    type: openai
    responses: native
    base_url: ${upstream.baseUrl}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: ["gpt-*"]
`,
  );
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await upstream?.close();
});

function runCodex(prompt: string, cwd: string, home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // The gateway as a Responses provider, as a team would put it in config.toml.
  const provider = `model_providers.gateway={name="gateway",base_url="${h.url}/v1",env_key="GATEWAY_API_KEY",wire_api="responses"}`;
  return new Promise((resolve) => {
    const child = execFile(
      codexBinary(),
      ['exec', '--skip-git-repo-check', '-c', 'model_provider=gateway', '-c', provider, prompt],
      { cwd, timeout: 120_000, env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: join(home, '.codex'), GATEWAY_API_KEY: key.key } },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr }),
    );
    // `codex exec` reads more of the prompt from a piped stdin until it ends.
    child.stdin?.end();
  });
}

describe('Codex through the gateway', () => {
  it('completes a tool loop on the native Responses path, one usage record and one audit event per turn', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'gw-codex-'));
    const home = join(cwd, '.home');
    mkdirSync(join(home, '.codex'), { recursive: true });
    const run = await runCodex('What is six times seven? Use the exec tool.', cwd, home);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('The tool said: 42');

    const turns = seen.filter((r) => r.path === '/v1/responses');
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.headers.authorization).toBe('Bearer sk-openai-provider-secret-0123456789');
      expect(JSON.stringify(turn.headers)).not.toContain(key.key);
      // As the CLI sent it: the fields and items a translation has no room for.
      expect(turn.body).toHaveProperty('client_metadata');
      expect((turn.body.input as { type: string }[]).some((i) => i.type === 'additional_tools')).toBe(true);
    }
    expect((turns[1]!.body.input as { type: string }[]).some((i) => i.type === 'custom_tool_call_output')).toBe(true);
    const { usage, audit } = await h.records();
    const records = usage.filter((u) => u.endpoint === 'responses');
    expect(records).toHaveLength(2);
    for (const record of records) expect(record).toMatchObject({ provider: 'openai', stream: true, tokens: { input: 300, output: 12, cached: 100 } });
    const events = audit.filter((a) => a.endpoint === 'responses');
    expect(events).toHaveLength(2);
    for (const event of events) expect(event).toMatchObject({ status: 200, outcome: 'success' });
  });
});

import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireRequest } from '../../test-support/wire-mock.js';
import { agentWorkdir, runCodex, startAgentGateway, type AgentGateway } from './agent-cli.js';
import { answerChat } from './chat-wire-answer.js';
import { answerAnthropic, signThinking } from './anthropic-thinking-answer.js';

/**
 * The OpenAI Codex CLI (the dev dependency's own binary, `codex exec` at its default settings,
 * with the gateway as its Responses provider) through the gateway on both paths: natively to a
 * provider entry with `responses: native` whose mock speaks OpenAI's Responses wire format, and
 * translated to a `type: openai` entry serving Chat Completions only, and translated to Claude on a
 * `type: anthropic` entry, whose extended thinking Codex's reasoning effort turns on. Each runs a
 * tool loop: a turn that calls Codex's `exec` tool (a custom tool, run in the CLI) and the turn that
 * answers from its output; every turn leaves one usage record and one audit event.
 */
const EXEC_INPUT = 'text(6 * 7 + " from the isolate");';
const told = (output: unknown) => `The tool said: ${JSON.stringify(output).includes('42 from the isolate') ? '42' : 'nothing'}`;

/** OpenAI's Responses event stream: the custom tool call, or the answer from its output. */
function responsesAnswer(req: WireRequest, res: ServerResponse, seen: readonly WireRequest[]): void {
  const input = Array.isArray(req.body.input) ? (req.body.input as { type?: string; output?: unknown }[]) : [];
  const output = input.find((i) => i.type === 'custom_tool_call_output');
  const item =
    output === undefined
      ? { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec', input: EXEC_INPUT }
      : { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: told(output.output), annotations: [] }] };
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

/** Chat Completions: `exec` called as the function that stands for it, or the answer from its tool message. */
function chatAnswer(req: WireRequest, res: ServerResponse): void {
  const output = ((req.body.messages ?? []) as { role: string; content: unknown }[]).find((m) => m.role === 'tool');
  const usage = { prompt_tokens: 300, completion_tokens: 12 };
  if (output === undefined) return answerChat(req, res, { call: { id: 'call_exec_1', name: 'exec', arguments: JSON.stringify({ input: EXEC_INPUT }) } }, usage);
  answerChat(req, res, { text: told(output.content) }, usage);
}

/** Claude: the exec tool called after a signed thought, or the answer from its result (the mock refuses a loop without the thought). */
const THOUGHT = { call: 'The user wants 6 * 7 run in the exec tool.', answer: 'The tool printed the product.' };
function claudeAnswer(req: WireRequest, res: ServerResponse): void {
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.at(-1)?.content;
  const result = Array.isArray(last) ? (last as { type: string; content?: unknown }[]).find((b) => b.type === 'tool_result') : undefined;
  if (result === undefined) return answerAnthropic(req, res, { call: { id: 'toolu_exec_1', name: 'exec', input: { input: EXEC_INPUT } } }, THOUGHT.call);
  answerAnthropic(req, res, { text: told(result.content) }, THOUGHT.answer);
}

let native: AgentGateway;
let translated: AgentGateway;
let claude: AgentGateway;

beforeAll(async () => {
  native = await startAgentGateway(
    'codex',
    (url) => `providers:
  - name: openai
    type: openai
    responses: native
    base_url: ${url}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: ["gpt-*"]
`,
    responsesAnswer,
  );
  translated = await startAgentGateway(
    'codex-translated',
    (url) => `providers:
  - name: chat
    type: openai
    base_url: ${url}/v1
    api_key: sk-openai-provider-secret-0123456789
    models: ["gpt-*"]
`,
    chatAnswer,
  );
  claude = await startAgentGateway(
    'codex-claude',
    (url) => `providers:
  - name: claude
    type: anthropic
    base_url: ${url}
    api_key: sk-ant-provider-secret-0123456789
    models:
      - { id: "gpt-*", upstream: "claude-*" }
`,
    claudeAnswer,
  );
});

afterAll(async () => {
  await native?.stop();
  await translated?.stop();
  await claude?.stop();
});

/** `codex exec` asked to use its exec tool through `gw`: two turns at `path`, one record and one event each. */
async function toolLoop(gw: AgentGateway, path: string, provider: string, credential: [string, string] = ['authorization', 'Bearer sk-openai-provider-secret-0123456789']): Promise<WireRequest[]> {
  const { cwd, home } = agentWorkdir('gw-codex-');
  const run = await runCodex(gw.h.url, gw.key.key, 'What is six times seven? Use the exec tool.', cwd, home);
  expect(run.code, run.stderr + run.stdout).toBe(0);
  expect(run.stdout).toContain('The tool said: 42');
  const turns = gw.seen.filter((r) => r.path === path);
  expect(turns).toHaveLength(2);
  for (const turn of turns) {
    expect(turn.headers[credential[0]]).toBe(credential[1]);
    expect(JSON.stringify(turn.headers)).not.toContain(gw.key.key);
  }
  const { usage, audit } = await gw.h.records();
  const records = usage.filter((u) => u.endpoint === 'responses');
  expect(records).toHaveLength(2);
  for (const record of records) expect(record).toMatchObject({ provider, stream: true, tokens: { input: 300, output: 12 } });
  const events = audit.filter((a) => a.endpoint === 'responses');
  expect(events).toHaveLength(2);
  for (const event of events) expect(event).toMatchObject({ status: 200, outcome: 'success' });
  return turns;
}

describe('Codex through the gateway', () => {
  it('completes a tool loop on the native Responses path, one usage record and one audit event per turn', async () => {
    const turns = await toolLoop(native, '/v1/responses', 'openai');
    for (const turn of turns) {
      // As the CLI sent it: the fields and items a translation has no room for.
      expect(turn.body).toHaveProperty('client_metadata');
      expect((turn.body.input as { type: string }[]).some((i) => i.type === 'additional_tools')).toBe(true);
      // And its own headers: who it is, its session and the turn, whatever the next release adds.
      expect(turn.headers).toHaveProperty('originator');
      expect(turn.headers).toHaveProperty('session-id');
      expect(Object.keys(turn.headers).some((name) => name.startsWith('x-codex-'))).toBe(true);
    }
    expect((turns[1]!.body.input as { type: string }[]).some((i) => i.type === 'custom_tool_call_output')).toBe(true);
  });

  it('completes a tool loop translated to a Chat Completions provider, one usage record and one audit event per turn', async () => {
    const turns = await toolLoop(translated, '/v1/chat/completions', 'chat');
    for (const turn of turns) {
      expect(turn.body).not.toHaveProperty('client_metadata');
      expect(turn.body).not.toHaveProperty('input');
      const tools = (turn.body.tools as { function: { name: string; parameters: { properties: Record<string, unknown> } } }[]).map((t) => t.function);
      // The custom exec tool as a function of one string; a namespaced tool under its flattened name.
      expect(tools.find((t) => t.name === 'exec')?.parameters.properties).toHaveProperty('input');
      expect(tools.some((t) => t.name.includes('__'))).toBe(true);
    }
    const replayed = (turns[1]!.body.messages as { tool_calls?: { function: { name: string; arguments: string } }[] }[]).find((m) => m.tool_calls !== undefined);
    expect(replayed?.tool_calls?.[0]?.function).toEqual({ name: 'exec', arguments: JSON.stringify({ input: EXEC_INPUT }) });
  });

  it("completes a tool loop translated to Claude with extended thinking, Codex's reasoning items carrying the signed thought back", async () => {
    const turns = await toolLoop(claude, '/v1/messages', 'claude', ['x-api-key', 'sk-ant-provider-secret-0123456789']);
    for (const turn of turns) {
      expect(turn.body.model).toMatch(/^claude-/);
      const thinking = turn.body.thinking as { type: string; budget_tokens: number };
      expect(thinking.type).toBe('enabled');
      expect(thinking.budget_tokens).toBeGreaterThanOrEqual(1024);
      expect(turn.body.max_tokens).toBeGreaterThan(thinking.budget_tokens);
    }
    // Codex sends store: false, so the gateway kept nothing: the thought came back in Codex's own input.
    const messages = turns[1]!.body.messages as { role: string; content: { type: string; thinking?: string; signature?: string }[] }[];
    const lastAssistant = messages.filter((m) => m.role === 'assistant').at(-1);
    expect(lastAssistant?.content[0]).toEqual({ type: 'thinking', thinking: THOUGHT.call, signature: signThinking(THOUGHT.call) });
    expect(lastAssistant?.content.some((b) => b.type === 'tool_use')).toBe(true);
  });
});

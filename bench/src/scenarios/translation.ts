import { REQUEST_PATHS, type RequestPath } from '@gateway/proxy/request-paths';
import { atMost, signedUs, us, type Row } from '../harness/report.js';
import { progress } from '../harness/progress.js';
import { median } from '../harness/stats.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * What translating a coding agent's turn costs over sending it natively, in this process (no
 * server, no provider: the body's own work, which is what the two paths differ in). The turn is
 * one Claude Code and Codex send mid tool loop — a system prompt, 10 messages with 4 tool calls
 * and their results, 20 tools, about 17 KB — in the Messages and the Responses protocol. Each
 * path is the gateway's own code in its chain's order (proxy/src/protocols/request-paths.ts):
 * native is the body parsed, scanned and sent as it came with the model id written in place;
 * translated is the body parsed, translated into the internal request and serialised for an
 * OpenAI-compatible provider. Rounds alternate the paths; the figure is the median over rounds of
 * CPU per request, and of the translated path's minus the native one's. A third path, translated
 * but stopped before it serialises, says what serialising costs (translated minus it).
 */
const TARGET_US = 30;
const PAD = 'x'.repeat(400);

function tools(kind: 'messages' | 'responses'): unknown[] {
  return Array.from({ length: 20 }, (_, i) => {
    const name = i === 0 ? 'read_file' : `tool_${i}`;
    const schema = { type: 'object', properties: { path: { type: 'string', description: 'Where.' }, line: { type: 'integer' } }, required: ['path'] };
    const description = `Tool number ${i}. ${PAD}`;
    return kind === 'messages' ? { name, description, input_schema: schema } : { type: 'function', name, description, parameters: schema };
  });
}

function messagesTurn(): Buffer {
  const messages: unknown[] = [{ role: 'user', content: `Fix the failing test in a.ts. ${PAD}` }];
  for (let i = 1; i <= 4; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${i}. ${PAD}` }, { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `f${i}.ts` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `export const v${i} = ${i}; ${PAD}` }] });
  }
  messages.push({ role: 'user', content: 'Go on.' });
  return Buffer.from(JSON.stringify({ model: 'agent-model', max_tokens: 4096, system: [{ type: 'text', text: `You are a coding agent. ${PAD}` }], tools: tools('messages'), messages }));
}

function responsesTurn(): Buffer {
  const input: unknown[] = [{ role: 'user', content: `Fix the failing test in a.ts. ${PAD}` }];
  for (let i = 1; i <= 4; i++) {
    input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Step ${i}. ${PAD}` }] });
    input.push({ type: 'function_call', call_id: `call_${i}`, name: 'read_file', arguments: JSON.stringify({ path: `f${i}.ts` }) });
    input.push({ type: 'function_call_output', call_id: `call_${i}`, output: `export const v${i} = ${i}; ${PAD}` });
  }
  input.push({ role: 'user', content: 'Go on.' });
  return Buffer.from(JSON.stringify({ model: 'agent-model', instructions: `You are a coding agent. ${PAD}`, store: false, stream: true, tools: tools('responses'), input }));
}

/** CPU per call of `path` over `n` calls, µs. */
function cpuPerCall(path: (raw: Buffer, upstreamModel: string) => unknown, raw: Buffer, n: number): number {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) path(raw, 'upstream-model-id');
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

interface Measured {
  bytes: number;
  nativeUs: number;
  translatedUs: number;
  addedUs: number;
  /** Translated minus the same path unserialised: what serialising the internal request costs, which no conversion avoids. */
  serialisingUs: number;
}

interface Paths {
  native: RequestPath;
  translated: RequestPath;
  unserialised: (raw: Buffer, upstreamModel: string) => unknown;
}

function measure(paths: Paths, raw: Buffer, rounds: number, perRound: number): Measured {
  cpuPerCall(paths.native, raw, perRound);
  cpuPerCall(paths.translated, raw, perRound);
  cpuPerCall(paths.unserialised, raw, perRound);
  const serialised: number[] = [];
  const native: number[] = [];
  const translated: number[] = [];
  const added: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Each round takes the paths in turn, the first one alternating, so both see the same machine.
    let n: number;
    let t: number;
    if (r % 2 === 0) {
      n = cpuPerCall(paths.native, raw, perRound);
      t = cpuPerCall(paths.translated, raw, perRound);
    } else {
      t = cpuPerCall(paths.translated, raw, perRound);
      n = cpuPerCall(paths.native, raw, perRound);
    }
    native.push(n);
    translated.push(t);
    added.push(t - n);
    serialised.push(t - cpuPerCall(paths.unserialised, raw, perRound));
  }
  return { bytes: raw.length, nativeUs: median(native), translatedUs: median(translated), addedUs: median(added), serialisingUs: median(serialised) };
}

export const translation: Scenario = {
  name: 'translation',
  title: "Translation: an agent turn's CPU translated against native, in-process",
  async run(ctx): Promise<ScenarioOutcome> {
    const rounds = sized(ctx, 7, 2);
    const perRound = sized(ctx, 5_000, 200);
    progress(`translation: ${rounds} rounds × ${perRound} calls per path and protocol`);
    const messages = measure(REQUEST_PATHS.messages, messagesTurn(), rounds, perRound);
    const responses = measure(REQUEST_PATHS.responses, responsesTurn(), rounds, perRound);
    const rows: Row[] = [];
    for (const [name, m, targeted] of [['Messages', messages, true], ['Responses', responses, false]] as const) {
      rows.push({ figure: `${name} turn (${Math.round(m.bytes / 1024)} KiB): CPU per request, native / translated`, gateway: `${us(m.nativeUs)} / ${us(m.translatedUs)}`, result: '', verdict: 'info' });
      rows.push({
        figure: `${name}: translation over native${targeted ? ` (target ≤ +${TARGET_US} µs)` : ''}`,
        gateway: signedUs(m.addedUs),
        result: targeted ? (m.addedUs <= TARGET_US ? 'within target' : 'over target') : '',
        ...(targeted ? { target: `≤ +${TARGET_US} µs`, verdict: atMost(m.addedUs, TARGET_US) } : { verdict: 'info' as const }),
      });
      rows.push({ figure: `${name}: of which serialising the internal request for the provider`, gateway: us(m.serialisingUs), result: 'translated − the same path unserialised', verdict: 'info' });
    }
    return { errors: 0, rows, data: { unit: 'µs', rounds, perRound, messages, responses } };
  },
};

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock } from '../../test-support/wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * A stream ends for the client when the provider's answer is whole ([DONE], message_stop), not
 * when the provider gets round to closing its body: a provider that keeps the body open after its
 * end marker must not hold the client's last event back.
 */
let mock: RunningWireMock;
let h: Harness;
let key: TestKey;

beforeAll(async () => {
  mock = await startWireMock((req, res) => {
    const model = String(req.body.model);
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const usage = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Everything, end marker included, then the body left open.
    res.write(chunk({ role: 'assistant', content: '' }, null) + chunk({ content: 'Hi' }, null) + chunk({}, 'stop') + usage + 'data: [DONE]\n\n');
  });
  h = await startHarness('stream-end', `providers:\n  - name: lingering\n    type: openai\n    base_url: ${mock.baseUrl}/v1\n    idle_timeout_ms: 60000\n    models: [m]\n`);
  key = await projectTestKey(h.redis, h.keys);
});

afterAll(async () => {
  await h?.stop();
  await mock?.close();
});

describe('the end of a stream', () => {
  it('reaches the client at the provider\'s [DONE], whatever the provider does with its body after', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    // The provider never closes its body: before the fix this read waited for the idle timeout.
    const text = await Promise.race([res.text(), new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), 10_000))]);
    expect(text).toContain('"content":"Hi"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const { usage } = await h.records();
    expect(usage.find((u) => u.request_id === res.headers.get('x-request-id'))).toMatchObject({ finish_reason: 'stop', tokens: { input: 3, output: 1 } });
  });
});

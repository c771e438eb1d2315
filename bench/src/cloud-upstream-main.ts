import { loadUws, type HttpResponse } from '@gateway/proxy/uws';

/**
 * `node bench/dist/cloud-upstream-main.js [port]`: the same short answer in four wire formats, for
 * the cloud-providers scenario: OpenAI Chat Completions (`/v1/chat/completions`, the baseline),
 * Bedrock Converse (`/model/{id}/converse`), Vertex AI's Gemini `generateContent` and Claude
 * `rawPredict` (`/v1/projects/…`), and an OAuth token endpoint (`/token`) issuing hour-long tokens.
 * Signatures and tokens are not checked here (the adapters' wire mocks do): this measures the
 * gateway's translation, on uWebSockets.js so the upstream is never the bottleneck.
 * Prints `listening <port>` once it accepts.
 */
const TEXT = 'Hello from the mock upstream. This reply is made of several small pieces.';
const usage = { prompt: 24, completion: 16 };

const ANSWERS = {
  openai: JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion, prompt_tokens_details: { cached_tokens: 0 } },
  }),
  bedrock: JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: TEXT }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: usage.prompt, outputTokens: usage.completion, totalTokens: usage.prompt + usage.completion, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 },
    metrics: { latencyMs: 1 },
  }),
  gemini: JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion, totalTokenCount: usage.prompt + usage.completion },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'bench-response',
  }),
  claude: JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: usage.prompt, output_tokens: usage.completion, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  }),
  token: JSON.stringify({ access_token: 'ya29.bench-token', expires_in: 3600, token_type: 'Bearer' }),
};

/** Reads the body to its end (so the connection stays usable), then answers. */
function answer(res: HttpResponse, body: string): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body);
    });
  });
}

const port = Number(process.argv[2] ?? 0);
const app = loadUws().App();
app.post('/v1/chat/completions', (res) => answer(res, ANSWERS.openai));
app.post('/model/*', (res) => answer(res, ANSWERS.bedrock));
app.post('/v1/projects/*', (res, req) => answer(res, req.getUrl().includes('/publishers/anthropic/') ? ANSWERS.claude : ANSWERS.gemini));
app.post('/token', (res) => answer(res, ANSWERS.token));
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) {
    process.stderr.write(`cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening ${loadUws().us_socket_local_port(socket)}\n`);
});
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

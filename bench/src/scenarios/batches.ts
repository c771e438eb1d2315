import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RunContext } from '../harness/context.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { connect, freshDatabase } from '../harness/database.js';
import { spawnNode, sleep, waitForHttp, waitForOutput, type Child } from '../harness/processes.js';
import { formatInt, progress } from '../harness/progress.js';
import { atLeast, atMost, ms, type Row } from '../harness/report.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_MODEL, BENCH_PROVIDER, profileArgs, startMock } from '../harness/stack.js';
import { startOpenAiBatchMock, type OpenAiBatchMock } from '../mock-openai-batches.js';
import { sized, type Scenario, type ScenarioOutcome } from './scenario.js';

/**
 * Batches (docs/batches.md): a 50,000-line input file uploaded through the proxy (streamed,
 * checked line by line, stored by the control plane), timed from the first byte sent to the file
 * object, with the proxy's resident memory sampled throughout; then a 10,000-line batch the
 * gateway runs itself on one proxy worker against the mock, timed from create to `completed`, and
 * its usage records counted in PostgreSQL once the writer has landed them (each line once); then
 * the same 10,000 lines as a provider-run batch (`batch: native`) against a mock of OpenAI's Batch
 * API that answers at once: the hand-off (every line admitted, sent as one provider batch) and the
 * collection (every result through its line's chain) timed apart, with the proxy's CPU per line.
 * Targets: upload ≤ 10 s with ≤ 64 MiB of extra memory; ≥ 2,000 lines/s (the gateway-run batch).
 *
 * Its own Redis prefix and database: the batch's records are landed by a writer of its own, and
 * the run's final records check (which counts every other scenario's) never sees them.
 */
const UPLOAD_TARGET_S = 10;
const MEMORY_TARGET_MIB = 64;
const LINES_PER_S_TARGET = 2_000;

/** The model a `batch: native` entry serves, at the Batch API mock. */
const NATIVE_MODEL = 'bench-batch-model';
const NATIVE_KEY = 'sk-bench-batch-provider-0123456789';

function lines(count: number, tag: string, model = BENCH_MODEL): string {
  let out = '';
  for (let i = 0; i < count; i++) {
    out += `${JSON.stringify({ custom_id: `${tag}-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `Summarise item ${i} of the quarterly report in one line.` }], max_tokens: 16 } })}\n`;
  }
  return out;
}

/** The bench provider (gateway-run lines) and a provider whose batches its own Batch API runs. */
function providersFile(ctx: RunContext, upstream: string, batchApi: string): string {
  const file = join(ctx.tmpDir, `providers-batches-${upstream.replace(/\D/g, '')}.json`);
  const providers = {
    providers: [
      { name: BENCH_PROVIDER, type: 'openai', base_url: `${upstream}/v1`, models: [BENCH_MODEL], timeout_ms: 300_000, idle_timeout_ms: 300_000 },
      { name: 'bench-batch-api', type: 'openai', base_url: `${batchApi}/v1`, api_key: NATIVE_KEY, batch: 'native', models: [{ id: NATIVE_MODEL, price: { input: 0.15, output: 0.6 } }] },
    ],
  };
  writeFileSync(file, JSON.stringify(providers, null, 2));
  return file;
}

async function createBatch(origin: string, key: string, inputFileId: string): Promise<string> {
  const created = await fetch(`${origin}/v1/batches`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h' }) });
  return ((await created.json()) as { id: string }).id;
}

interface Ended {
  status: string;
  counts: { total: number; completed: number; failed: number };
}

async function untilEnded(origin: string, key: string, id: string): Promise<Ended> {
  for (;;) {
    const found = (await (await fetch(`${origin}/v1/batches/${id}`, { headers: { 'x-api-key': key } })).json()) as { status: string; request_counts: Ended['counts'] };
    if (['completed', 'failed', 'cancelled', 'expired'].includes(found.status)) return { status: found.status, counts: found.request_counts };
    await sleep(50);
  }
}

async function usageRecords(sql: ReturnType<typeof connect>, batchId: string, expected: number): Promise<{ landed: number; distinct: number }> {
  const deadline = Date.now() + 120_000;
  let landed = 0;
  for (;;) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from usage_records where batch_id = ${batchId}`;
    landed = row?.n ?? 0;
    if (landed >= expected || Date.now() > deadline) break;
    await sleep(200);
  }
  const [distinct] = await sql<{ n: number }[]>`select count(distinct id)::int as n from usage_records where batch_id = ${batchId}`;
  return { landed, distinct: distinct?.n ?? 0 };
}

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return Number(kib ?? 0) * 1024;
}

async function upload(origin: string, key: string, body: string): Promise<{ id: string; status: number }> {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([body], { type: 'application/jsonl' }), 'bench.jsonl');
  const res = await fetch(`${origin}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const answer = (await res.json()) as { id: string };
  return { id: answer.id, status: res.status };
}

export const batches: Scenario = {
  name: 'batches',
  title: 'Batches: a 50,000-line upload and a 10,000-line gateway-run batch',
  async run(ctx: RunContext): Promise<ScenarioOutcome> {
    const uploadLines = sized(ctx, 50_000, 2_000);
    const batchLines = sized(ctx, 10_000, 500);
    const prefix = `${ctx.prefix}batches:`;
    const token = randomBytes(24).toString('base64url');
    const db = freshDatabase(ctx.options.databaseUrl, 'batches');
    const mock = await startMock(ctx);
    const batchApi: OpenAiBatchMock = await startOpenAiBatchMock(NATIVE_KEY, (line) => ({
      status: 200,
      body: { id: `chatcmpl-${line.custom_id}`, object: 'chat.completion', created: 1, model: line.body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'A one-line summary.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 14, completion_tokens: 6, total_tokens: 20 } },
    }));
    let cp: ControlPlane | null = null;
    let proxy: Child | null = null;
    let writer: Child | null = null;
    const sql = connect(db.url);
    try {
      cp = await startControlPlane(ctx, db.url, prefix, { INTERNAL_TOKEN: token });
      const project = await cp.call<{ id: string }>('POST', '/v1/projects', { name: 'bench batches' }, 201);
      const { key } = await cp.call<{ key: string }>('POST', `/v1/projects/${project.id}/keys`, { name: 'bench' }, 201);
      proxy = spawnNode('gateway (batches)', 'proxy/dist/main.js', [], {
        nodeArgs: profileArgs(ctx, 'gateway-batches'),
        env: {
          PROXY_HOST: '127.0.0.1',
          PROXY_PORT: '0',
          METRICS_PORT: '0',
          PROXY_WORKERS: '1',
          REDIS_URL: ctx.redisUrl,
          REDIS_PREFIX: prefix,
          GATEWAY_CONFIG: providersFile(ctx, mock.origin, batchApi.baseUrl),
          CONTROL_PLANE_URL: cp.origin,
          INTERNAL_TOKEN: token,
          // A provider batch is asked how it goes at once: the collection, not the wait, is measured.
          BATCH_POLL_MS: '10',
          LOG_LEVEL: 'info',
        },
      });
      const [, port] = await waitForOutput(proxy, /"port":(\d+)[^\n]*"msg":"proxy listening"/);
      const origin = `http://127.0.0.1:${port}`;
      await waitForHttp(`${origin}/readyz`, proxy);
      writer = spawnNode('writer (batches)', 'control-plane/dist/writer-main.js', [], { env: { DATABASE_URL: db.url, REDIS_URL: ctx.redisUrl, REDIS_PREFIX: prefix, WRITER_PORT: '0', LOG_LEVEL: 'info' } });
      await waitForOutput(writer, /"msg":"writer started"/, 60_000);

      // Upload: wall time and the proxy's memory above what it held before.
      const body = lines(uploadLines, 'up');
      progress(`batches: uploading ${formatInt(uploadLines)} lines (${(body.length / 1048576).toFixed(1)} MiB)`);
      const pid = proxy.pid;
      const before = rssBytes(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
      const t0 = performance.now();
      const uploaded = await upload(origin, key, body).finally(() => clearInterval(sampler));
      const uploadS = (performance.now() - t0) / 1000;
      peak = Math.max(peak, rssBytes(pid));
      if (uploaded.status !== 200) throw new Error(`upload answered ${uploaded.status}`);
      const extraMiB = (peak - before) / 1048576;
      progress(`batches: uploaded in ${uploadS.toFixed(2)} s, +${extraMiB.toFixed(1)} MiB resident`);

      // A gateway-run batch: create to completed.
      const input = await upload(origin, key, lines(batchLines, 'run'));
      const cpu0 = { proxy: cpuSeconds(pid), controlPlane: cpuSeconds(cp.child.pid) };
      const t1 = performance.now();
      const batchId = await createBatch(origin, key, input.id);
      const { status, counts } = await untilEnded(origin, key, batchId);
      const runS = (performance.now() - t1) / 1000;
      const linesPerS = batchLines / runS;
      // Per line: the proxy runs it (the whole request chain) and stores its answer; the control plane keeps it.
      const cpuUsPerLine = { proxy: ((cpuSeconds(pid) - cpu0.proxy) / batchLines) * 1e6, controlPlane: ((cpuSeconds(cp.child.pid) - cpu0.controlPlane) / batchLines) * 1e6 };
      progress(`batches: ${formatInt(batchLines)} lines ${status} in ${runS.toFixed(2)} s (${formatInt(linesPerS)} lines/s)`);

      // Every line's usage record, once: counted after the writer has taken them all.
      const { landed, distinct } = await usageRecords(sql, batchId, batchLines);

      // The same lines run by the provider's own Batch API: handed off (admitted, sent as one batch), then collected.
      const nativeInput = await upload(origin, key, lines(batchLines, 'native', NATIVE_MODEL));
      const cpu2 = cpuSeconds(pid);
      const t2 = performance.now();
      const nativeId = await createBatch(origin, key, nativeInput.id);
      for (;;) {
        if (batchApi.batches.some((b) => b.metadata?.gateway_batch?.startsWith(nativeId) === true)) break;
        await sleep(5);
      }
      const handOffS = (performance.now() - t2) / 1000;
      const cpu3 = cpuSeconds(pid);
      const t3 = performance.now();
      batchApi.release();
      const native = await untilEnded(origin, key, nativeId);
      const collectS = (performance.now() - t3) / 1000;
      const nativeCpuUs = { handOff: ((cpu3 - cpu2) / batchLines) * 1e6, collect: ((cpuSeconds(pid) - cpu3) / batchLines) * 1e6 };
      const sent = batchApi.batches.filter((b) => b.metadata?.gateway_batch?.startsWith(nativeId) === true).reduce((n, b) => n + b.lines.length, 0);
      progress(`batches: provider-run ${formatInt(batchLines)} lines handed off in ${handOffS.toFixed(2)} s, collected in ${collectS.toFixed(2)} s (${native.status})`);
      const nativeRecords = await usageRecords(sql, nativeId, batchLines);
      const nativeOnce = nativeRecords.landed === batchLines && nativeRecords.distinct === batchLines;

      const rows: Row[] = [
        { figure: `upload of ${formatInt(uploadLines)} lines: wall time (target ≤ ${UPLOAD_TARGET_S} s)`, gateway: ms(uploadS * 1000, 0), result: uploadS <= UPLOAD_TARGET_S ? 'within target' : 'over target', verdict: atMost(uploadS, UPLOAD_TARGET_S) },
        { figure: `upload: proxy memory added at peak (target ≤ ${MEMORY_TARGET_MIB} MiB)`, gateway: `${extraMiB.toFixed(1)} MiB`, result: extraMiB <= MEMORY_TARGET_MIB ? 'within target' : 'over target', verdict: atMost(extraMiB, MEMORY_TARGET_MIB) },
        { figure: `gateway-run batch of ${formatInt(batchLines)} lines, one worker (target ≥ ${formatInt(LINES_PER_S_TARGET)} lines/s)`, gateway: `${formatInt(linesPerS)} lines/s`, result: `${status}, ${formatInt(counts.completed)} completed, ${formatInt(counts.failed)} failed`, verdict: status === 'completed' ? atLeast(linesPerS, LINES_PER_S_TARGET) : 'miss' },
        { figure: 'batch: CPU per line, proxy / control plane', gateway: `${Math.round(cpuUsPerLine.proxy)} / ${Math.round(cpuUsPerLine.controlPlane)} µs`, result: '', verdict: 'info' },
        { figure: 'batch: usage records in PostgreSQL, one per line', gateway: formatInt(landed), result: landed === batchLines && distinct === batchLines ? 'each line once' : `expected ${formatInt(batchLines)}`, verdict: landed === batchLines && distinct === batchLines ? 'pass' : 'miss' },
        { figure: `provider-run batch of ${formatInt(batchLines)} lines: handed off (admitted, sent as one provider batch)`, gateway: `${formatInt(batchLines / handOffS)} lines/s`, result: `${formatInt(sent)} lines sent in ${ms(handOffS * 1000, 0)}`, verdict: sent === batchLines ? 'info' : 'miss' },
        { figure: 'provider-run batch: collected (each result through its line\'s chain)', gateway: `${formatInt(batchLines / collectS)} lines/s`, result: `${native.status}, ${formatInt(native.counts.completed)} completed, ${formatInt(native.counts.failed)} failed`, verdict: native.status === 'completed' && native.counts.completed === batchLines ? 'info' : 'miss' },
        { figure: 'provider-run batch: proxy CPU per line, hand-off / collection', gateway: `${Math.round(nativeCpuUs.handOff)} / ${Math.round(nativeCpuUs.collect)} µs`, result: '', verdict: 'info' },
        { figure: 'provider-run batch: usage records in PostgreSQL, one per line', gateway: formatInt(nativeRecords.landed), result: nativeOnce ? 'each line once' : `expected ${formatInt(batchLines)}`, verdict: nativeOnce ? 'pass' : 'miss' },
      ];
      const nativeErrors = (native.status === 'completed' ? 0 : 1) + native.counts.failed + (sent === batchLines ? 0 : 1) + (nativeOnce ? 0 : 1);
      const errors = (status === 'completed' ? 0 : 1) + (landed === batchLines ? 0 : 1) + counts.failed + nativeErrors;
      return {
        errors,
        rows,
        data: {
          uploadLines,
          uploadBytes: body.length,
          uploadS,
          uploadExtraMiB: extraMiB,
          batchLines,
          runS,
          linesPerS,
          cpuUsPerLine,
          status,
          counts,
          usageRecords: landed,
          native: { handOffS, collectS, cpuUsPerLine: nativeCpuUs, sent, status: native.status, counts: native.counts, usageRecords: nativeRecords.landed },
        },
      };
    } finally {
      await sql.end({ timeout: 1 });
      await writer?.stop();
      await proxy?.stop('SIGTERM', 20_000);
      await cp?.stop();
      await mock.stop();
      await batchApi.close();
      await db.drop();
    }
  },
};

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../http/uws.js';
import { startTracing } from './start-tracing.js';

describe('startTracing', () => {
  it('is null without an endpoint', async () => {
    expect(await startTracing({ OTEL_TRACES_SAMPLER: 'always_on' }, { providers: [] } as never, pino({ level: 'silent' }))).toBeNull();
  });

  it('stops cleanly when the collector refuses the last spans (a drain must not fail on it)', async () => {
    let refused = 0;
    const collector = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        refused++;
        res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const tracer = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, { providers: [] } as never, pino({ level: 'silent' }));
      const call = { endpoint: null, model: null, provider: null, projectId: '', keyId: '', info: { requestId: 'r1' }, extras: null };
      tracer?.start(call, { getHeader: () => '' } as unknown as HttpRequest, 'GET', '/v1/models').end('success', 200, null, undefined);
      await expect(tracer?.close()).resolves.toBeUndefined();
      expect(refused).toBe(1);
    } finally {
      collector.close();
    }
  });
});

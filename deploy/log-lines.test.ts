import { describe, expect, it } from 'vitest';
import { createLogFormatter, formatLogLine } from './log-lines.js';

// Lines as the services write them (pino, Fastify's request logging), trimmed of nothing.
const T = 1795440748764;
const at = (ms: number) => {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
};
const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: T, pid: 19218, hostname: 'vm', name: 'control-plane', ...fields });

describe('npm start log lines', () => {
  it('prints a request as one line: method, path, status, time', () => {
    const format = createLogFormatter('control-plane');
    const reqId = '01a2089b-a8db-770a-83ee-c67523b86c31';
    expect(format(line({ reqId, req: { method: 'POST', url: '/v1/signins', host: 'localhost', remoteAddress: '127.0.0.1', remotePort: 38724 }, msg: 'incoming request' }))).toBeNull();
    expect(format(line({ reqId, res: { statusCode: 401 }, responseTime: 2.326411999999891, msg: 'request completed' }))).toBe(
      `${at(T)} control-plane POST /v1/signins 401 2ms`,
    );
  });

  it("prints the control plane's one-line request log the same way", () => {
    expect(formatLogLine('control-plane', line({ reqId: 'r7', method: 'GET', url: '/v1/projects', status: 401, ms: 1.5, msg: 'request completed' }))).toBe(
      `${at(T)} control-plane GET /v1/projects 401 2ms`,
    );
  });

  it('lines the service names up, and tags warnings and errors', () => {
    expect(formatLogLine('proxy', line({ level: 40, name: 'proxy', dependency: 'redis', url: 'redis://127.0.0.1:6379', attempt: 2, reason: 'ECONNREFUSED', retryInMs: 500, msg: 'waiting for Redis at redis://127.0.0.1:6379 (ECONNREFUSED); attempt 2, next in 500 ms' }))).toBe(
      `${at(T)} proxy         WARN waiting for Redis at redis://127.0.0.1:6379 (ECONNREFUSED); attempt 2, next in 500 ms`,
    );
    expect(formatLogLine('writer', line({ level: 50, err: { message: 'connection reset', stack: 'Error: …' }, batch: 'b-1', msg: 'batch failed' }))).toBe(
      `${at(T)} writer        ERROR batch failed: connection reset  batch=b-1`,
    );
  });

  it('keeps the fields the message does not say, lists joined', () => {
    expect(formatLogLine('control-plane', line({ applied: ['0001_init.sql', '0002_project_policies.sql'], msg: 'migrations applied' }))).toBe(
      `${at(T)} control-plane migrations applied  applied=0001_init.sql,0002_project_policies.sql`,
    );
    expect(formatLogLine('control-plane', line({ live: 0, removed: 0, note: 'two words', msg: 'key projection rebuilt from postgres' }))).toBe(
      `${at(T)} control-plane key projection rebuilt from postgres  live=0 removed=0 note="two words"`,
    );
  });

  it('passes lines that are not JSON log lines through unchanged (the banners)', () => {
    for (const text of ['Admin password (shown once): _r5R9vN4ns-u14cQOTKvQuO4', '', '{not json', '{"level":"info"}', '=' .repeat(72)]) {
      expect(formatLogLine('control-plane', text)).toBe(text);
    }
  });

  it('forgets requests it never saw complete, within a bound', () => {
    const pending = new Map();
    for (let i = 0; i < 1_500; i++) formatLogLine('control-plane', line({ reqId: `r${i}`, req: { method: 'GET', url: `/v1/x/${i}` }, msg: 'incoming request' }), pending);
    expect(pending.size).toBe(1_000);
    expect(formatLogLine('control-plane', line({ reqId: 'r1499', res: { statusCode: 200 }, responseTime: 0.4, msg: 'request completed' }), pending)).toBe(
      `${at(T)} control-plane GET /v1/x/1499 200 0ms`,
    );
    expect(formatLogLine('control-plane', line({ reqId: 'r0', res: { statusCode: 200 }, msg: 'request completed' }), pending)).toBe(`${at(T)} control-plane ? ? 200`);
  });
});

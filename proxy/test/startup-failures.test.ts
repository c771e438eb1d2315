import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, testRedisPrefix } from '../../test-support/databases.js';
import { ROOT } from '../../test-support/processes.js';
import { clearPrefix, testRedis } from '../../test-support/redis.js';

/**
 * A proxy that cannot start because of a setting stops with one line on stderr naming that
 * setting and exit code 1, on the main thread and on worker threads alike: never a Node stack,
 * an unhandled rejection or a native assertion from a worker's event loop.
 */
const prefix = testRedisPrefix('startup-failures');
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => busy.close(() => resolve()));
  const redis = testRedis();
  await clearPrefix(redis, prefix);
  await redis.quit();
});

function runProxy(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'proxy/dist/main.js')], {
      env: { PATH: process.env.PATH, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PROXY_HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function expectOneLine(stderr: string, setting: string): void {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toContain(setting);
  expect(stderr).not.toMatch(/uv_loop_close|Assertion|^\s+at /m);
}

describe('a start-up failure is one line naming the setting', () => {
  for (const workers of ['1', '2']) {
    it(`a busy METRICS_PORT with PROXY_WORKERS=${workers}`, async () => {
      const { code, stderr } = await runProxy({ PROXY_WORKERS: workers, PROXY_PORT: '0', METRICS_PORT: String(busyPort) });
      expect(code).toBe(1);
      expectOneLine(stderr, 'METRICS_PORT');
      expect(stderr).toContain(String(busyPort));
    }, 45_000);

    it(`a busy PROXY_PORT with PROXY_WORKERS=${workers}`, async () => {
      const { code, stderr } = await runProxy({ PROXY_WORKERS: workers, PROXY_PORT: String(busyPort), METRICS_PORT: '0' });
      expect(code).toBe(1);
      expectOneLine(stderr, 'PROXY_PORT');
    }, 45_000);
  }

  it('a bad providers file, started many times in a row: exit 1 and its reason every time, never a native crash', async () => {
    // Each worker thread loads the native modules (uWebSockets.js, RE2) at once; one that is not
    // safe to load in two threads at a time crashed about one start in ten, before any line.
    const dir = mkdtempSync(join(tmpdir(), 'gw-bad-providers-'));
    const files = [
      ['providers: [\n', 'not valid YAML'],
      ['providers:\n  - name: a\n    type: nope\n', '"type" must be one of'],
      [null, 'cannot read'],
    ] as const;
    const outcomes: string[] = [];
    for (let i = 0; i < 24; i++) {
      const [text, reason] = files[i % files.length]!;
      const file = join(dir, `providers-${i}.yaml`);
      if (text !== null) writeFileSync(file, text);
      const { code, stderr } = await runProxy({ PROXY_WORKERS: '2', PROXY_PORT: '0', METRICS_PORT: '0', GATEWAY_CONFIG: file });
      const lines = stderr.split('\n').filter((l) => l.trim() !== '');
      outcomes.push(code === 1 && lines.length === 1 && lines[0]!.includes(reason) ? 'ok' : `start ${i}: exit ${code}, stderr ${JSON.stringify(stderr)}`);
    }
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
  }, 180_000);

  it('a first start prints no internal jargon', async () => {
    // A proxy that starts and is stopped: its lines are what an operator sees on every start.
    const { stdout } = await runProxy({ PROXY_WORKERS: '1', PROXY_PORT: String(busyPort), METRICS_PORT: '0' });
    expect(stdout).not.toMatch(/invalidation channel|key map|subscribed/);
  }, 45_000);
});

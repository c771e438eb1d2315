import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Smoke test of the bench itself: the throughput scenario in --quick mode, as `npm run bench`
 * would run it, writing into a scratch directory. It checks the shape of the result file and that
 * nothing failed; timings on a shared machine say nothing, so none is asserted.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gwbench-test-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bench/dist/main.js', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('bench', () => {
  it('runs the throughput scenario quickly and writes a well-formed result with no errors', { timeout: 180_000 }, async () => {
    const { code, output } = await runBench(['--scenario', 'throughput', '--quick', '--results-dir', dir]);
    expect(code, output).toBe(0);

    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    expect(files).not.toContain('latest.json');
    const result = JSON.parse(readFileSync(join(dir, files[0] as string), 'utf8'));

    expect(result).toMatchObject({ schema: 1, mode: 'quick', settings: { connections: 64, scenarios: ['throughput'] } });
    expect(result.machine).toEqual(expect.objectContaining({ cpu: expect.any(String), cores: expect.any(Number), node: process.version }));

    const throughput = result.scenarios.find((s: { name: string }) => s.name === 'throughput');
    expect(throughput).toMatchObject({ status: 'ok', errors: 0 });
    for (const name of ['direct', 'bare', 'gateway']) {
      const target = throughput.data.targets[name];
      expect(target.errors).toBe(0);
      expect(target.rounds).toHaveLength(3);
      expect(Number.isFinite(target.medianRps)).toBe(true);
      for (const round of target.rounds) expect(round).toMatchObject({ errors: 0, non2xx: 0, timeouts: 0 });
    }
    expect(throughput.rows[0]).toEqual(expect.objectContaining({ figure: expect.any(String), result: expect.stringMatching(/^gateway\/bare /), target: '≥ 0.85' }));

    // Every request the gateway finished was audited and its records reached PostgreSQL.
    const records = result.scenarios.find((s: { name: string }) => s.name === 'records');
    expect(records).toMatchObject({ status: 'ok', errors: 0 });
    expect(records.data.landedAudit).toBe(records.data.expectedAudit);
    expect(records.data.landedUsage).toBe(records.data.expectedUsage);
    expect(records.data.perScenario.throughput.expected).toBeGreaterThan(0);

    // The table went to stdout, the key did not.
    expect(output).toMatch(/throughput\s+req\/s/);
    expect(output).not.toMatch(/gw_[A-Za-z0-9_-]{43}/);
  });

  it('breaks one request down into the steps of the gateway and the bare pass-through', { timeout: 180_000 }, async () => {
    const out = mkdtempSync(join(dir, 'breakdown-'));
    const { code, output } = await runBench(['--scenario', 'breakdown', '--quick', '--results-dir', out]);
    expect(code, output).toBe(0);
    const file = readdirSync(out).find((f) => f.endsWith('.json')) as string;
    const result = JSON.parse(readFileSync(join(out, file), 'utf8'));
    const breakdown = result.scenarios.find((s: { name: string }) => s.name === 'breakdown');
    expect(breakdown).toMatchObject({ status: 'ok', errors: 0 });
    const segments = (proxy: 'bare' | 'gateway') => breakdown.data.steps[proxy].segments.map((s: { segment: string }) => s.segment);
    // Both proxies mark the moments any proxy has; the gateway marks each of its steps between them.
    expect(segments('bare')).toEqual(['arrived → body', 'body → provider.sent', 'provider.sent → provider.headers', 'provider.headers → provider.answered', 'provider.answered → answered']);
    expect(segments('gateway')).toEqual(expect.arrayContaining(['arrived → refuseWhileDraining', 'readBody → authenticate', 'callModel → provider.sent', 'provider.sent → provider.answered', 'respond → answered', 'answered → closed']));
    expect(breakdown.data.steps.gateway.requests).toBeGreaterThanOrEqual(breakdown.data.requestsPerRound * 3);
  });
});

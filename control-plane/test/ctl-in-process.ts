import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../src/cli/run.js';
import type { Harness } from './harness.js';

/** gatewayctl run in this process, signed in as the harness's admin through its own config file in `dir`. */
export async function ctlInProcess(h: Harness, dir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ url: h.base, token: h.adminToken, expires_at: Date.now() + 50 * 60_000 }));
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    term: { stdinIsTTY: false, stdoutIsTTY: false, readStdin: async () => '', ask: async () => '', askHidden: async () => '', confirm: async () => false },
    env: { GATEWAYCTL_CONFIG: config },
    now: Date.now,
  });
  return { code, stdout, stderr };
}

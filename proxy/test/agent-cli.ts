import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startWireMock, type RunningWireMock, type WireRequest } from '../../test-support/wire-mock.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The coding agents' own binaries (dev dependencies, at their default settings) run against the
 * gateway: Claude Code with the gateway as its Anthropic base URL, the Codex CLI with the gateway
 * as its Responses provider, as a team would configure them. Nothing but model calls leaves the
 * machine (no telemetry, no update check).
 */
const require = createRequire(import.meta.url);

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The platform package's native binary (the wrapper's install script, which copies it, is not run). */
function claudeBinary(): string {
  const pkg = require.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`);
  return join(dirname(pkg), 'claude');
}

const CODEX_TRIPLES: Record<string, string> = { 'linux-x64': 'x86_64-unknown-linux-musl', 'linux-arm64': 'aarch64-unknown-linux-musl' };

/** The platform package's binary, which the npm wrapper would start. */
function codexBinary(): string {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = require.resolve(`@openai/codex-${platform}/package.json`);
  return join(dirname(pkg), 'vendor', CODEX_TRIPLES[platform] ?? platform, 'bin', 'codex');
}

function run(binary: string, args: string[], cwd: string, env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(binary, args, { cwd, timeout: 120_000, env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr }),
    );
    // `codex exec` reads more of the prompt from a piped stdin until it ends; Claude Code waits for it too.
    child.stdin?.end();
  });
}

/** `claude -p <prompt> --output-format json` against the gateway at `gatewayUrl`. */
export function runClaude(gatewayUrl: string, apiKey: string, prompt: string, cwd: string, home: string): Promise<CliRun> {
  return run(claudeBinary(), ['-p', prompt, '--output-format', 'json'], cwd, {
    HOME: home,
    ANTHROPIC_BASE_URL: gatewayUrl,
    ANTHROPIC_API_KEY: apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  });
}

/** `codex exec <prompt>` with the gateway at `gatewayUrl` as its Responses provider. */
export function runCodex(gatewayUrl: string, apiKey: string, prompt: string, cwd: string, home: string): Promise<CliRun> {
  const provider = `model_providers.gateway={name="gateway",base_url="${gatewayUrl}/v1",env_key="GATEWAY_API_KEY",wire_api="responses"}`;
  return run(codexBinary(), ['exec', '--skip-git-repo-check', '-c', 'model_provider=gateway', '-c', provider, prompt], cwd, {
    HOME: home,
    CODEX_HOME: join(home, '.codex'),
    GATEWAY_API_KEY: apiKey,
  });
}

/** A gateway with one project key in front of one mock provider, which records every request it answers. */
export interface AgentGateway {
  h: Harness;
  key: TestKey;
  upstream: RunningWireMock;
  seen: WireRequest[];
  stop(): Promise<void>;
}

export async function startAgentGateway(label: string, providersYaml: (upstreamUrl: string) => string, answer: (req: WireRequest, res: ServerResponse, seen: readonly WireRequest[]) => void): Promise<AgentGateway> {
  const seen: WireRequest[] = [];
  const upstream = await startWireMock((req, res) => {
    seen.push(req);
    answer(req, res, seen);
  });
  const h = await startHarness(label, providersYaml(upstream.baseUrl));
  const key = await projectTestKey(h.redis, h.keys);
  return {
    h,
    key,
    upstream,
    seen,
    stop: async () => {
      await h.stop();
      await upstream.close();
    },
  };
}

/** A fresh working directory for one CLI run, with its own HOME (and Codex's CODEX_HOME inside it). */
export function agentWorkdir(prefix: string): { cwd: string; home: string } {
  const cwd = mkdtempSync(join(tmpdir(), prefix));
  const home = join(cwd, '.home');
  mkdirSync(join(home, '.codex'), { recursive: true });
  return { cwd, home };
}

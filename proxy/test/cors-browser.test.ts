import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectTestKey, type TestKey } from '../../test-support/redis.js';
import { startHarness, type Harness } from './harness.js';

/**
 * CORS_ORIGINS, in a real browser: a page on an allowed origin streams a completion with the
 * official `openai` SDK (dangerouslyAllowBrowser) through the gateway to the mock provider and
 * reads the exposed x-request-id; a page on another origin is refused by the browser itself, its
 * preflight answered without CORS headers. Without CORS_ORIGINS nothing changes.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const providers = `providers:\n  - name: builtin\n    type: mock\n    options: { chunks: 4 }\n    models: [mock-1]\n`;
// The SDK's own ES modules, served as they are published (no bundler): what an app would ship.
const OPENAI_DIR = dirname(createRequire(import.meta.url).resolve('openai'));

/** The app: the SDK streams a completion and reads the exposed x-request-id. */
const PAGE = `<!doctype html><title>app</title>
<script type="module">
import { OpenAI } from '/openai/client.mjs';
window.streamCompletion = async (baseURL, apiKey) => {
  try {
    const client = new OpenAI({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'mock-1', messages: [{ role: 'user', content: 'Hello from a browser' }], stream: true })
      .withResponse();
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    return { ok: true, text, chunks, requestId: response.headers.get('x-request-id') };
  } catch (err) {
    return { ok: false, error: err.name + ': ' + err.message };
  }
};
</script>`;

let allowedSite: Site;
let otherSite: Site;
let h: Harness;
let plain: Harness;
let key: TestKey;
let browser: Browser;

interface Site {
  server: Server;
  origin: string;
}

/** A static site: an empty page, and the openai package under /openai/. */
async function startSite(): Promise<Site> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const file = normalize(join(OPENAI_DIR, path.replace(/^\/openai\//, '')));
    if (!path.startsWith('/openai/') || !file.startsWith(OPENAI_DIR)) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

beforeAll(async () => {
  allowedSite = await startSite();
  otherSite = await startSite();
  h = await startHarness('cors', providers, { CORS_ORIGINS: `https://app.example.com, ${allowedSite.origin}` });
  plain = await startHarness('cors-unset', providers);
  key = await projectTestKey(h.redis, h.keys);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await plain?.stop();
  for (const site of [allowedSite, otherSite]) await new Promise((resolve) => site?.server.close(resolve));
});

interface PageResult {
  ok: boolean;
  text?: string;
  chunks?: number;
  requestId?: string | null;
  error?: string;
}

/** Opens the site's page and streams a completion from it with the openai SDK. */
async function streamFrom(site: Site): Promise<PageResult> {
  const page = await browser.newPage();
  try {
    await page.goto(`${site.origin}/`);
    await page.waitForFunction('typeof window.streamCompletion === "function"');
    return (await page.evaluate(`window.streamCompletion(${JSON.stringify(`${h.url}/v1`)}, ${JSON.stringify(key.key)})`)) as PageResult;
  } finally {
    await page.close();
  }
}

describe('CORS_ORIGINS in Chromium', () => {
  it('lets a page on an allowed origin stream a completion with the openai SDK and read x-request-id', async () => {
    const result = await streamFrom(allowedSite);
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.chunks).toBeGreaterThan(1);
    expect(result.text).toContain('You said: Hello from a browser');
    expect(result.requestId).toMatch(/\S/);
    const { audit } = await h.records();
    expect(audit.find((a) => a.request_id === result.requestId)).toMatchObject({ outcome: 'success', key_id: key.id });
  });

  it('is refused by the browser for a page on another origin', async () => {
    const result = await streamFrom(otherSite);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/Connection error/i);
  });
});

describe('the preflight and the headers', () => {
  const preflight = (url: string, origin: string, headers = 'authorization, content-type, x-stainless-os, x-stainless-retry-count, x-evil') =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
    });

  it('answers an allowed origin 204 without a key, echoing only the allowed request headers', async () => {
    const res = await preflight(h.url, 'https://app.example.com');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os, x-stainless-retry-count');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('vary')?.toLowerCase()).toContain('origin');
    const anthropic = await preflight(h.url, 'https://app.example.com', 'x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, x-stainless-lang');
    expect(anthropic.headers.get('access-control-allow-headers')).toBe('x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, x-stainless-lang');
  });

  it('refuses another origin without CORS headers', async () => {
    const res = await preflight(h.url, 'https://evil.example.com');
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('exposes the request id, retry and rate-limit headers on answers, errors included, and varies on Origin', async () => {
    const res = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://app.example.com' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const exposed = res.headers.get('access-control-expose-headers')?.split(/,\s*/) ?? [];
    for (const name of ['x-request-id', 'retry-after', 'x-ratelimit-remaining-requests', 'x-ratelimit-remaining-tokens', 'x-gateway-cache']) expect(exposed).toContain(name);
    expect(res.headers.get('vary')?.toLowerCase()).toContain('origin');
    const other = await fetch(`${h.url}/v1/models`, { headers: { origin: 'https://evil.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('vary')?.toLowerCase()).toContain('origin');
  });

  it('changes nothing without CORS_ORIGINS: no preflight, no headers', async () => {
    const res = await preflight(plain.url, 'https://app.example.com');
    expect(res.status).toBe(405);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const answer = await fetch(`${plain.url}/v1/models`, { headers: { origin: 'https://app.example.com' } });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.headers.get('access-control-expose-headers')).toBeNull();
    expect(answer.headers.get('vary')).toBeNull();
  });
});

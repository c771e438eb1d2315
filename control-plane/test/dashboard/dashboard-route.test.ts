import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDashboard } from '../../src/http/routes/dashboard.js';
import { startHarness, type Harness } from '../harness.js';

/**
 * How the control plane serves the built dashboard: caching, the fallback of page URLs to
 * index.html for browsers only, and a clear answer when nothing was built. A made-up build in
 * a temporary folder keeps these independent of the real one.
 */
const INDEX = '<!doctype html><title>Model gateway</title><script type="module" src="/assets/index-AbC123.js"></script>';

let root: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gw-dashboard-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), INDEX);
  writeFileSync(join(root, 'assets', 'index-AbC123.js'), 'console.log("dashboard")');
  app = Fastify();
  await registerDashboard(app, { root });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  rmSync(root, { recursive: true, force: true });
});

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('the built dashboard', () => {
  it('serves index.html at / for revalidation on every load, with a strict content policy', async () => {
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toBe(INDEX);

    const again = await app.inject({ method: 'GET', url: '/', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('lets caches keep hashed assets for a year', async () => {
    const res = await app.inject({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toContain('dashboard');
  });

  it('answers a browser navigation to a page of the app with index.html', async () => {
    for (const url of ['/usage', '/keys?project=0d3c', '/some/deeper/page']) {
      const res = await app.inject({ method: 'GET', url, headers: { accept: BROWSER_ACCEPT } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.body, url).toBe(INDEX);
    }
  });

  it('falls back only for GETs that ask for HTML outside /v1', async () => {
    const cases = [
      { method: 'GET', url: '/usage', accept: 'application/json' },
      { method: 'GET', url: '/usage', accept: '*/*' },
      { method: 'GET', url: '/usage', accept: 'text/html;q=0' },
      { method: 'GET', url: '/v1/usage-typo', accept: BROWSER_ACCEPT },
      { method: 'GET', url: '/v1', accept: BROWSER_ACCEPT },
      { method: 'POST', url: '/usage', accept: BROWSER_ACCEPT },
      { method: 'GET', url: '/assets/missing-123.js', accept: BROWSER_ACCEPT },
    ] as const;
    for (const c of cases) {
      const res = await app.inject({ method: c.method, url: c.url, headers: { accept: c.accept } });
      expect(res.statusCode, `${c.method} ${c.url} (${c.accept})`).toBe(404);
      expect(res.body, `${c.method} ${c.url}`).not.toBe(INDEX);
    }
  });

  it('says how to build the dashboard when it has not been built', async () => {
    const bare = Fastify();
    await registerDashboard(bare, { root: join(root, 'not-built') });
    const res = await bare.inject({ method: 'GET', url: '/' });
    await bare.close();
    expect(res.statusCode).toBe(503);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as { error: { code: string; message: string } };
    expect(body.error.code).toBe('UNAVAILABLE');
    expect(body.error.message).toContain('npm run build');
  });
});

describe('inside the control plane', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('dashroute');
  });
  afterAll(async () => h?.close());

  it('keeps the API answers of unknown paths: JSON 404s and 405s, never the page', async () => {
    const unknown = await h.api('GET', '/v1/no-such-thing', { headers: { accept: BROWSER_ACCEPT } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');

    const post = await h.api('POST', '/no-such-page', { body: {} });
    expect(post.status).toBe(404);
    expect(post.body.error.code).toBe('NOT_FOUND');

    const wrongMethod = await h.api('GET', '/v1/signouts', { headers: { accept: BROWSER_ACCEPT } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    // GET /v1/signins is an API answer (the ways to sign in), never the page either.
    const methods = await h.api('GET', '/v1/signins', { headers: { accept: BROWSER_ACCEPT } });
    expect(methods.body).toEqual({ password: true, sso: false });

    const apiClient = await h.api('GET', '/projects');
    expect(apiClient.status).toBe(404);
    expect(apiClient.body.error.code).toBe('NOT_FOUND');
  });

  it('leaves the dashboard out of the OpenAPI document', async () => {
    const doc = (await h.api('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).every((path) => path.startsWith('/v1/'))).toBe(true);
    expect(h.cp.app.routeTable.map((r) => r.url)).toEqual(expect.arrayContaining(['/', '/*', '/assets/*']));
  });
});

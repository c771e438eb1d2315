import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '@gateway/shared';

/**
 * The dashboard: a single-page app that Vite builds into control-plane/dashboard/dist, served from
 * the API's own origin so it needs no CORS and keeps its token in memory only. It is a client of
 * the public API like any other, not API itself: its routes stay outside /v1 and out of the
 * OpenAPI document.
 */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

export interface DashboardOptions {
  /** The built app (index.html and assets/); tests point it elsewhere. */
  root?: string;
}

/**
 * The page may only load its own scripts and styles and talk to its own origin: an injected
 * script could read the token held in memory, or a key secret while it is on screen.
 */
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

const NOT_BUILT = Errors.dashboardNotBuilt();

/** A year, the most a cache honours: asset names carry a content hash, so a name never changes meaning. */
const ASSET_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Browser navigations to a page of the app (a reload of /usage, a bookmark) get index.html; the
 * app's router takes it from there. Expressed as a route constraint rather than a catch-all route
 * so that API clients keep their JSON 404s and 405s: the method check of the not-found handler
 * does not see constrained routes, and requests that do not ask for HTML never match.
 */
const pageNavigation = {
  name: 'dashboardPage',
  mustMatchWhenDerived: false,
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (value: string) => handlers.get(value) ?? null,
      set: (value: string, handler: unknown) => void handlers.set(value, handler),
    };
  },
  deriveConstraint(req: IncomingMessage) {
    return req.method === 'GET' && !isApiPath(req.url ?? '/') && acceptsHtml(req.headers.accept) ? 'page' : undefined;
  },
};

export async function registerDashboard(app: FastifyInstance, options: DashboardOptions = {}): Promise<void> {
  const root = options.root ?? DASHBOARD_DIST;
  app.addConstraintStrategy(pageNavigation as Parameters<FastifyInstance['addConstraintStrategy']>[0]);

  // Encapsulated, so the plugin's reply decorators stay out of the API's scope.
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      // A missing build is reported by GET /, with instructions; no warning at every start.
      suppressWarning: true,
      cacheControl: true,
      maxAge: ASSET_MAX_AGE_MS,
      immutable: true,
      setHeaders: (reply) => void reply.header('x-content-type-options', 'nosniff'),
    });
  });

  const page = (req: FastifyRequest, reply: FastifyReply) => sendPage(root, req, reply);
  const schema = { hide: true };
  app.get('/', { schema }, page);
  app.get('/*', { schema, constraints: { dashboardPage: 'page' } }, page);
}

async function sendPage(root: string, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  let html: Buffer;
  try {
    html = await readFile(join(root, 'index.html'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return reply.status(503).header('cache-control', 'no-store').send(NOT_BUILT.toBody());
  }
  // no-cache means "revalidate": an ETag makes that a 304 instead of the page again.
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
  void reply.headers(PAGE_HEADERS).header('etag', etag);
  if (req.headers['if-none-match'] === etag) return reply.status(304).send();
  return reply.type('text/html; charset=utf-8').send(html);
}

function isApiPath(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
}

/** An explicit text/html (what browsers send on navigation), not the catch-all `*\/*` of API clients. */
function acceptsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    return type?.trim() === 'text/html' && !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p));
  });
}

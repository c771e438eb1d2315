import type { FastifyInstance } from 'fastify';
import { encodeInvalidation, Errors } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { requireInternalToken } from '../internal-token.js';
import { logPosition, readInvalidations, type LogEntry } from '../../keys/invalidation-log.js';

/**
 * GET /internal/v1/invalidations?after=<id>: the invalidation log as a long-lived stream of
 * newline-delimited JSON (one Invalidation per line), for proxies only. It replays the entries
 * after `after` (none without it: the stream starts at the head), then sends new ones as they
 * commit, on any control plane of the deployment, and a `stream.alive` line every second carrying
 * the id the stream has reached, so a proxy can tell a quiet stream from a dead one. Authenticated
 * with INTERNAL_TOKEN as a bearer token; not part of the public /v1 API or its OpenAPI document.
 */
const HEARTBEAT_MS = 1_000;
const AFTER = /^\d{1,15}$/;

export function registerInternalInvalidationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: Record<string, string | undefined> }>('/internal/v1/invalidations', { logLevel: 'warn' }, async (req, reply) => {
    requireInternalToken(req, ctx);
    const rawAfter = req.query.after;
    if (rawAfter !== undefined && !AFTER.test(rawAfter)) {
      throw Errors.badLogPosition();
    }
    const after = rawAfter === undefined ? null : Number(rawAfter);
    const position = await logPosition(ctx.sql, after);

    reply.hijack();
    const res = reply.raw;
    // connection: close, so the socket goes with the stream and is never parked as idle keep-alive.
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', connection: 'close', 'x-request-id': req.id });
    res.flushHeaders();
    // The socket itself is what must go at the end: a response that never ends keeps it open. The
    // feed cuts every stream when the control plane closes; proxies reconnect to another replica.
    const socket = req.raw.socket;
    const untrack = ctx.invalidations.track(socket);

    let cursor = after === null || position.pruned ? position.head : after;
    if (position.pruned) res.write(mark('stream.reset', cursor));
    else res.write(mark('stream.alive', cursor));

    let pumping = false;
    let again = false;
    let closed = false;
    // The last read of the log failed: no heartbeat until one succeeds (each tick tries again).
    let failing = false;
    const pump = async (): Promise<void> => {
      if (pumping) {
        again = true;
        return;
      }
      pumping = true;
      try {
        do {
          again = false;
          for (;;) {
            const entries = await readInvalidations(ctx.sql, cursor);
            if (closed || entries.length === 0) break;
            res.write(entries.map(line).join(''));
            cursor = entries[entries.length - 1]!.id;
          }
        } while (again && !closed);
        if (failing) {
          // At warn, as the failure was (the route logs nothing below warn): the pair shows how long it lasted.
          req.log.warn({ after: cursor }, 'invalidation stream reads the log again');
          // At once, not at the next tick: the proxy has heard nothing since the reads failed.
          if (!closed) res.write(mark('stream.alive', cursor));
        }
        failing = false;
      } catch (err) {
        // One failed query (a connection PostgreSQL dropped, the pool being replaced) does not end
        // the stream: cutting it made every proxy reconnect and report the channel lost. The next
        // wake or tick reads again from the same cursor, so nothing is missed; meanwhile no
        // heartbeat goes out, so a stream whose reads keep failing reads as lost on the proxy
        // (after its staleness bound) rather than as live and empty.
        if (!failing) req.log.warn({ err: { message: (err as Error).message } }, 'invalidation stream cannot read the log; trying again');
        failing = true;
      } finally {
        pumping = false;
      }
    };
    const unsubscribe = ctx.invalidations.subscribe(() => void pump());
    const heartbeat = setInterval(() => {
      if (pumping || closed) return;
      if (failing) void pump();
      else res.write(mark('stream.alive', cursor));
    }, HEARTBEAT_MS);
    res.on('close', () => {
      // The proxy went away (its side closed): the response never ends by itself, so the socket
      // would stay half-open.
      socket.destroy();
      closed = true;
      clearInterval(heartbeat);
      unsubscribe();
      untrack();
    });
    void pump();
  });
}

function line(entry: LogEntry): string {
  return `${encodeInvalidation({ kind: entry.kind, key_hash: entry.key_hash, key_id: entry.key_id, project_id: entry.project_id, at: entry.created_at, id: entry.id })}\n`;
}

function mark(kind: 'stream.alive' | 'stream.reset', id: number): string {
  return `${encodeInvalidation({ kind, key_hash: null, key_id: null, project_id: null, id })}\n`;
}


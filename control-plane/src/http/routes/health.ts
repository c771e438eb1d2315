import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';

/**
 * Liveness and readiness (Postgres and Redis answer); no token needed. Prometheus metrics are on
 * their own port (CONTROL_METRICS_PORT, see control-plane.ts), never on the management API's.
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): void {
  // Probes and scrapes arrive every few seconds from every orchestrator: not worth a log line each.
  const quiet = { logLevel: 'silent' as const };
  app.get('/healthz', quiet, async () => ({ status: 'ok' }));

  app.get('/readyz', quiet, async (_req, reply) => {
    const [postgres, redis] = await Promise.all([
      ctx.sql`select 1`.then(() => true, () => false),
      // An offline ioredis client queues commands instead of failing them, so ask its state first.
      ctx.redis.status === 'ready' ? ctx.redis.ping().then(() => true, () => false) : Promise.resolve(false),
    ]);
    const ready = postgres && redis;
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis });
  });
}

import type { FastifyInstance } from 'fastify';
import { ConfigError, loadControlPlaneConfig, RedisKeys, StartupError, connectRedis, type Env } from '@gateway/shared';
import type { AppContext } from './context.js';
import { connectDb } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { ensurePartitions } from './db/partitions.js';
import { buildApp } from './http/app.js';
import { KeyProjection } from './keys/projection.js';
import { createLogger } from './logger.js';
import { createRegistry } from './metrics.js';
import { seed, type SeedResult } from './seed.js';

export interface ControlPlane {
  app: FastifyInstance;
  ctx: AppContext;
  port: number;
  seeded: SeedResult;
  close(): Promise<void>;
}

const PARTITION_CHECK_MS = 6 * 60 * 60 * 1000;

/**
 * Brings the control plane up in dependency order: Postgres (created and migrated), Redis, the
 * key projection rebuilt from Postgres (Redis may have restarted empty), first-start seeding, then
 * the HTTP listener. Throws StartupError / ConfigError with an operator-readable message.
 */
export async function startControlPlane(env: Env): Promise<ControlPlane> {
  const config = loadControlPlaneConfig(env);
  const log = createLogger(config.logLevel, 'control-plane');
  const sql = await connectDb(config.databaseUrl, { createIfMissing: true });
  let redis;
  try {
    const migrated = await migrate(sql);
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');
    await ensurePartitions(sql);
    redis = await connectRedis(config.redisUrl);
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  redis.on('error', (err) => log.warn({ err: { message: err.message } }, 'redis connection error'));

  const keys = new RedisKeys(config.redisPrefix);
  const projection = new KeyProjection(redis, keys);
  const ctx: AppContext = { config, sql, redis, keys, projection, log, metrics: createRegistry('control_plane_') };

  const rebuilt = await projection.rebuild(sql);
  log.info(rebuilt, 'key projection rebuilt from postgres');
  const seeded = await seed(sql, projection, {
    adminEmail: config.adminEmail,
    adminPassword: config.adminPassword,
    seedDemo: config.seedDemo,
  });

  const app = await buildApp(ctx);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;

  const partitionTimer = setInterval(() => {
    ensurePartitions(sql).catch((err: Error) => log.error({ err: { message: err.message } }, 'partition maintenance failed'));
  }, PARTITION_CHECK_MS);
  partitionTimer.unref();

  return {
    app,
    ctx,
    port,
    seeded,
    async close() {
      clearInterval(partitionTimer);
      await app.close();
      await Promise.allSettled([sql.end({ timeout: 5 }), redis.quit()]);
    },
  };
}

export { ConfigError, StartupError };

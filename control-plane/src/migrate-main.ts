import { ConfigError, loadWriterConfig, StartupError, waitMessage } from '@gateway/shared';
import { connectDb } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { dropPartitionsBefore, ensurePartitions } from './db/partitions.js';

/**
 * `npm run migrate`: create the database if needed, apply pending migrations, make partitions.
 * `npm run migrate -- --drop-before 2026-01`: also drop the monthly record partitions of the months
 * before that one (the retention of usage and audit records is an operator's call).
 */
function dropBefore(argv: string[]): number | null {
  const i = argv.indexOf('--drop-before');
  if (i === -1) return null;
  const match = /^(\d{4})-(\d{2})$/.exec(argv[i + 1] ?? '');
  if (!match) throw new ConfigError('--drop-before takes a month as YYYY-MM');
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, 1);
}

try {
  const cutoff = dropBefore(process.argv.slice(2));
  const { databaseUrl, startupTimeoutMs } = loadWriterConfig(process.env);
  const sql = await connectDb(databaseUrl, {
    createIfMissing: true,
    max: 1,
    // A migration job may start beside its database: wait for it, a line per step on stderr.
    wait: { timeoutMs: startupTimeoutMs, onWait: (step) => process.stderr.write(`migrate: ${waitMessage(step)}\n`) },
  });
  try {
    const result = await migrate(sql);
    const created = await ensurePartitions(sql);
    process.stdout.write(
      `migrations: ${result.applied.length === 0 ? 'none pending' : `applied ${result.applied.join(', ')}`} (${result.alreadyApplied} already applied)\n` +
        (created.length > 0 ? `partitions created: ${created.join(', ')}\n` : ''),
    );
    if (cutoff !== null) {
      const dropped = await dropPartitionsBefore(sql, cutoff);
      process.stdout.write(`partitions dropped: ${dropped.length === 0 ? 'none' : dropped.join(', ')}\n`);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
} catch (err) {
  if (err instanceof StartupError || err instanceof ConfigError) {
    process.stderr.write(`migrate: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

import { parseAddresses } from '@gateway/shared';
import { startRedisSentinel } from '../../test-support/redis-sentinel.js';
import { replicatedRedisSuite } from './redis-failover.case.js';

/** The gateway on a master and replica watched by three sentinels (REDIS_SENTINELS); the master is killed. */
replicatedRedisSuite(
  'redis-sentinel',
  async () => {
    const sentinel = await startRedisSentinel();
    return {
      env: { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name },
      target: { kind: 'sentinel', sentinels: parseAddresses('REDIS_SENTINELS', sentinel.sentinels), name: sentinel.name, tls: false, db: 0 },
      async failOver() {
        const master = await sentinel.currentMaster();
        await sentinel.kill(master);
        await sentinel.waitForFailover(master);
      },
      close: () => sentinel.close(),
    };
  },
  { failovers: 1 },
);

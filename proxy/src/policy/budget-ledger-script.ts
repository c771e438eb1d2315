import type { RedisClient } from '@gateway/shared';

/**
 * The one Redis script of the budget ledgers (RedisKeys.budgetLedger: a hash under the project's
 * hash tag, so it runs on a Redis Cluster). Amounts are integers of nano-dollars, so every sum is
 * exact. Each call, atomically, for one proxy:
 *
 *   1. applies its settlement `seq` once (a retried call whose first try did land changes nothing):
 *      `charge` moves from the proxy's lease to `spent`, `release` goes back from the lease;
 *   2. drops every lease whose time is up (`exp:<proxy>` ≤ Redis's clock): a proxy that died, or was
 *      cut off for longer than the TTL, no longer holds any part of the limit;
 *   3. grants up to `want` more, only from what is left: spent + Σ live leases ≤ limit, always;
 *   4. renews the proxy's lease for `ttl` ms.
 *
 * A ledger without `spent` was lost (a Redis restart) or is a new period's: it starts at 0 only
 * when the caller knows the control plane has loaded this Redis (RedisKeys.budgetLedgersReady),
 * else the script answers "unknown" and changes nothing.
 *
 * KEYS[1] ledger. ARGV[1] limit, ARGV[2] want, ARGV[3] proxy id, ARGV[4] lease TTL (ms), ARGV[5]
 * ledger expiry (Unix ms, 0: none), ARGV[6] settlement seq (0: none), ARGV[7] charge, ARGV[8]
 * release, ARGV[9] '1' when a missing ledger may start at 0.
 * Returns { 1, granted, spent, the proxy's lease now } or { 0, 0, 0, 0 } (unknown ledger).
 */
export const BUDGET_LEDGER_LUA = `
local key = KEYS[1]
local p = ARGV[3]
local lf, ef, sf = 'lease:' .. p, 'exp:' .. p, 'seq:' .. p
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HEXISTS', key, 'spent') == 0 then
  if ARGV[9] ~= '1' then return { 0, 0, 0, 0 } end
  redis.call('HSET', key, 'spent', 0)
end
local mine = tonumber(redis.call('HGET', key, lf) or '0')
local live = tonumber(redis.call('HGET', key, ef) or '0') > now
if not live then mine = 0 end
local seq = tonumber(ARGV[6])
if seq > 0 and seq > tonumber(redis.call('HGET', key, sf) or '0') then
  local charge = tonumber(ARGV[7])
  redis.call('HINCRBY', key, 'spent', charge)
  mine = math.max(0, mine - charge - tonumber(ARGV[8]))
  redis.call('HSET', key, sf, seq)
end
local fields = redis.call('HGETALL', key)
local spent = 0
local others = 0
for i = 1, #fields, 2 do
  local f = fields[i]
  if f == 'spent' then
    spent = tonumber(fields[i + 1])
  elseif string.sub(f, 1, 6) == 'lease:' and f ~= lf then
    local owner = string.sub(f, 7)
    if tonumber(redis.call('HGET', key, 'exp:' .. owner) or '0') > now then
      others = others + tonumber(fields[i + 1])
    else
      redis.call('HDEL', key, f, 'exp:' .. owner, 'seq:' .. owner)
    end
  end
end
local grant = 0
local want = tonumber(ARGV[2])
if want > 0 then
  local avail = tonumber(ARGV[1]) - spent - others - mine
  if avail > 0 then grant = math.min(want, avail) end
end
mine = mine + grant
if mine > 0 then
  redis.call('HSET', key, lf, mine, ef, now + tonumber(ARGV[4]))
else
  redis.call('HDEL', key, lf, ef)
end
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIREAT', key, ARGV[5]) end
return { 1, grant, spent, mine }
`;

export interface LedgerCall {
  key: string;
  limit: number;
  want: number;
  proxyId: string;
  ttlMs: number;
  expireAt: number;
  seq: number;
  charge: number;
  release: number;
  mayStart: boolean;
}

/** [known (1/0), granted, spent, the proxy's lease now] */
export type LedgerAnswer = [number, number, number, number];

export type LedgerCommand = (call: LedgerCall) => Promise<LedgerAnswer>;

/** Defines the script on `redis` (EVALSHA, loaded again by ioredis when Redis lost it). */
export function budgetLedgerCommand(redis: RedisClient): LedgerCommand {
  redis.defineCommand('gatewayBudgetLedger', { numberOfKeys: 1, lua: BUDGET_LEDGER_LUA });
  type Raw = (...args: (string | number)[]) => Promise<(number | string)[]>;
  const command = (redis as unknown as { gatewayBudgetLedger: Raw }).gatewayBudgetLedger.bind(redis);
  return async (c) => {
    const answer = await command(c.key, c.limit, c.want, c.proxyId, c.ttlMs, c.expireAt, c.seq, c.charge, c.release, c.mayStart ? '1' : '0');
    return answer.map(Number) as LedgerAnswer;
  };
}

import type { Redis } from 'ioredis';
import type { RedisKeys } from '@gateway/shared';
import type { BenchOptions } from '../cli.js';

/** What every scenario of one local run shares. */
export interface RunContext {
  options: BenchOptions;
  redisUrl: string;
  /** One Redis prefix for the whole run: every gateway's records land in the same queue. */
  prefix: string;
  redis: Redis;
  keys: RedisKeys;
  /** Scratch directory (providers files); removed at the end. */
  tmpDir: string;
  /** Where gateway CPU profiles go when --cpu-prof is given. */
  profileDir: string | null;
  /** Requests each gateway process reported finishing, by scenario, for the records check. */
  ledger: Map<string, GatewayTally>;
}

/** From a gateway's /metrics just before it stops: the records it owes the queue. */
export interface GatewayTally {
  /** gateway_requests_total: one audit event each. */
  requests: number;
  /** Requests that reached a provider: one usage record each. */
  routed: number;
  /** gateway_records_dropped_total: should stay 0. */
  dropped: number;
}

export function addTally(ledger: Map<string, GatewayTally>, scenario: string, tally: GatewayTally): void {
  const sum = ledger.get(scenario) ?? { requests: 0, routed: 0, dropped: 0 };
  ledger.set(scenario, { requests: sum.requests + tally.requests, routed: sum.routed + tally.routed, dropped: sum.dropped + tally.dropped });
}

/** The User-Agent a scenario's requests carry: audit events record it, so landing is checked per scenario. */
export function userAgent(scenario: string, variant?: string): string {
  return variant === undefined ? `gateway-bench/${scenario}` : `gateway-bench/${scenario}/${variant}`;
}

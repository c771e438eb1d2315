import { anthropic } from './anthropic.js';
import { authFlood } from './auth-flood.js';
import { breakdown } from './breakdown.js';
import { budgets } from './budgets.js';
import { cache } from './cache.js';
import { cloudProviders } from './cloud-providers.js';
import { endpoints } from './endpoints.js';
import { failover } from './failover.js';
import { guardrails } from './guardrails.js';
import { idleMemory } from './idle-memory.js';
import { latency } from './latency.js';
import { mcp } from './mcp.js';
import { revocation } from './revocation.js';
import type { Scenario } from './scenario.js';
import { sequential } from './sequential.js';
import { batches } from './batches.js';
import { streaming } from './streaming.js';
import { throughput } from './throughput.js';
import { throughputCluster } from './throughput-cluster.js';
import { tracing } from './tracing.js';
import { translation } from './translation.js';
import { usageQuery } from './usage-query.js';
import { writer } from './writer.js';

/** Every scenario, in the order a full run takes them (cheap and sensitive first). */
export const SCENARIOS: readonly Scenario[] = [throughput, latency, sequential, breakdown, streaming, anthropic, cloudProviders, endpoints, translation, cache, idleMemory, revocation, authFlood, failover, mcp, guardrails, tracing, budgets, writer, usageQuery, batches, throughputCluster];

export function findScenarios(names: readonly string[]): Scenario[] {
  if (names.length === 0) return [...SCENARIOS];
  return names.map((name) => {
    const found = SCENARIOS.find((s) => s.name === name);
    if (found === undefined) throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return found;
  });
}

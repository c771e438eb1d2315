import keySlot from 'cluster-key-slot';
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './redis-connect.js';

/**
 * Whole-keyspace work that a Redis Cluster spreads over its masters: SCAN sees only the node it
 * runs on, and one DEL (or MULTI, or pipeline) may only name keys of one hash slot.
 */

/** Every key matching `pattern`, in batches: from each master of a cluster, or the one server. */
export async function* scanKeys(client: RedisClient, pattern: string, count = 1000): AsyncIterable<string[]> {
  const nodes: Redis[] = isCluster(client) ? client.nodes('master') : [client];
  for (const node of nodes) {
    for await (const batch of node.scanStream({ match: pattern, count }) as AsyncIterable<string[]>) {
      if (batch.length > 0) yield batch;
    }
  }
}

/** Deletes `keys` with one DEL per hash slot (one in all without a cluster); returns how many existed. */
export async function deleteKeys(client: RedisClient, keys: readonly string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const groups = isCluster(client) ? [...bySlot(keys).values()] : [keys];
  const counts = await Promise.all(groups.map((group) => client.del(...group)));
  return counts.reduce((sum, n) => sum + n, 0);
}

/** One write for runPerSlot: a command name, its key, then its other arguments. */
export type SlotCommand = [command: string, key: string, ...args: (string | number)[]];

/**
 * Runs `commands` as one MULTI per hash slot (one MULTI in all without a cluster): each slot's
 * writes apply together, and no transaction names keys of two slots.
 */
export async function runPerSlot(client: RedisClient, commands: readonly SlotCommand[]): Promise<void> {
  if (commands.length === 0) return;
  const groups = isCluster(client) ? [...bySlot(commands, (c) => c[1]).values()] : [commands];
  await Promise.all(
    groups.map(async (group) => {
      const replies = await client.multi(group.map(([command, ...args]) => [command, ...args])).exec();
      const failed = replies?.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
    }),
  );
}

function bySlot<T>(items: readonly T[], keyOf: (item: T) => string = (item) => item as unknown as string): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const slot = keySlot(keyOf(item));
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [item]);
    else group.push(item);
  }
  return groups;
}

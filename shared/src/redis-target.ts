import { ConfigError } from './config/env.js';

/** One Redis server address, as given in REDIS_CLUSTER_NODES or REDIS_SENTINELS. */
export interface RedisAddress {
  host: string;
  port: number;
}

/**
 * Where the gateway's Redis is: one server (REDIS_URL), a Redis Cluster given by seed nodes, or
 * a master found through Sentinel. Credentials and TLS for the data nodes come from REDIS_URL in
 * every form (`rediss://user:password@…`), so one secret configures all three.
 */
export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | { kind: 'cluster'; nodes: RedisAddress[]; username?: string; password?: string; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: RedisAddress[];
      name: string;
      username?: string;
      password?: string;
      tls: boolean;
      db: number;
      /** Password of the sentinels themselves (REDIS_SENTINEL_PASSWORD). */
      sentinelPassword?: string;
    };

export interface RedisTargetSettings {
  url: string;
  clusterNodes?: string | undefined;
  sentinels?: string | undefined;
  sentinelName?: string | undefined;
  sentinelPassword?: string | undefined;
}

/** Chooses the target from the settings; cluster and sentinel together are a configuration error. */
export function redisTarget(settings: RedisTargetSettings): RedisTarget {
  const { url, clusterNodes, sentinels, sentinelName } = settings;
  if (clusterNodes !== undefined && sentinels !== undefined) {
    throw new ConfigError('REDIS_CLUSTER_NODES and REDIS_SENTINELS exclude each other; set one');
  }
  const parsed = new URL(url);
  const username = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
  const password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  const tls = parsed.protocol === 'rediss:';
  if (clusterNodes !== undefined) {
    return { kind: 'cluster', nodes: parseAddresses('REDIS_CLUSTER_NODES', clusterNodes), username, password, tls };
  }
  if (sentinels !== undefined) {
    if (sentinelName === undefined) throw new ConfigError('REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the name of the monitored master');
    const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
    if (!Number.isInteger(db) || db < 0) throw new ConfigError('REDIS_URL: the database number in its path must be a whole number');
    return {
      kind: 'sentinel',
      sentinels: parseAddresses('REDIS_SENTINELS', sentinels),
      name: sentinelName,
      username,
      password,
      tls,
      db,
      sentinelPassword: settings.sentinelPassword,
    };
  }
  if (sentinelName !== undefined) throw new ConfigError('REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not');
  return { kind: 'standalone', url };
}

/** `host:port,host:port` (IPv6 as `[::1]:7000`). */
export function parseAddresses(name: string, value: string): RedisAddress[] {
  const addresses = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(entry);
      const port = Number(match?.[2]);
      if (match === null || port < 1 || port > 65535) throw new ConfigError(`${name}: "${entry}" is not host:port`);
      return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
    });
  if (addresses.length === 0) throw new ConfigError(`${name} names no host:port`);
  return addresses;
}

/** For messages: where the gateway looks for Redis, with no credential. */
export function describeRedisTarget(target: RedisTarget | string): string {
  if (typeof target === 'string') return target;
  const list = (addresses: RedisAddress[]) => addresses.map((a) => `${a.host}:${a.port}`).join(',');
  switch (target.kind) {
    case 'standalone':
      return target.url;
    case 'cluster':
      return `cluster ${list(target.nodes)}`;
    case 'sentinel':
      return `sentinel master "${target.name}" via ${list(target.sentinels)}`;
  }
}

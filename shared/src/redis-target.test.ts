import { describe, expect, it } from 'vitest';
import { loadProxyConfig, loadWriterConfig } from './config/service-config.js';
import { describeRedisTarget } from './redis-target.js';
import { unreachableMessage } from './startup.js';

describe('Redis target from the environment', () => {
  it('is REDIS_URL alone by default', () => {
    expect(loadProxyConfig({}).redis).toEqual({ kind: 'standalone', url: 'redis://127.0.0.1:6379' });
  });

  it('is a cluster with REDIS_CLUSTER_NODES, credentials and TLS from REDIS_URL', () => {
    const target = loadWriterConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, [::1]:7001 ,redis-2:7002', REDIS_URL: 'rediss://gw:p%40ss@ignored:6379' }).redis;
    expect(target).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
        { host: 'redis-2', port: 7002 },
      ],
      username: 'gw',
      password: 'p@ss',
      tls: true,
    });
  });

  it('is a Sentinel-found master with REDIS_SENTINELS and REDIS_SENTINEL_NAME, database from REDIS_URL', () => {
    const target = loadProxyConfig({
      REDIS_SENTINELS: '10.0.0.1:26379,10.0.0.2:26379',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      REDIS_URL: 'redis://:data-secret@ignored/3',
    }).redis;
    expect(target).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
      ],
      name: 'mymaster',
      username: undefined,
      password: 'data-secret',
      tls: false,
      db: 3,
      sentinelPassword: 'sentinel-secret',
    });
  });

  it('refuses settings that cannot be meant', () => {
    expect(() => loadProxyConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 'b:2', REDIS_SENTINEL_NAME: 'm' })).toThrow(/exclude each other/);
    expect(() => loadProxyConfig({ REDIS_SENTINELS: 'b:2' })).toThrow(/REDIS_SENTINELS needs REDIS_SENTINEL_NAME/);
    expect(() => loadProxyConfig({ REDIS_SENTINEL_NAME: 'm' })).toThrow(/REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not/);
    expect(() => loadProxyConfig({ REDIS_CLUSTER_NODES: '10.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES: "10.0.0.1" is not host:port/);
    expect(() => loadProxyConfig({ REDIS_CLUSTER_NODES: 'h:99999' })).toThrow(/is not host:port/);
    expect(() => loadProxyConfig({ REDIS_CLUSTER_NODES: ' , ' })).toThrow(/names no host:port/);
  });

  it('is described in start-up errors by its addresses, never a password', () => {
    const cluster = loadProxyConfig({ REDIS_CLUSTER_NODES: 'h1:7000,h2:7001', REDIS_URL: 'redis://:hunter2@x:1' }).redis;
    const message = unreachableMessage('redis', describeRedisTarget(cluster), 'ECONNREFUSED');
    expect(message).toContain('cluster h1:7000,h2:7001');
    expect(message).not.toContain('hunter2');
    expect(unreachableMessage('redis', 'redis://:hunter2@x:1', 'ECONNREFUSED')).not.toContain('hunter2');
  });
});

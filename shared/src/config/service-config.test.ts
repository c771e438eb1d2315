import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadControlPlaneConfig, loadProxyConfig, loadWriterConfig } from './service-config.js';

describe('service configuration', () => {
  it('uses the defaults of DESIGN §2', () => {
    const proxy = loadProxyConfig({});
    expect(proxy.port).toBe(8080);
    expect(proxy.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(proxy.maxBodyBytes).toBe(4 * 1024 * 1024);
    const cp = loadControlPlaneConfig({});
    expect(cp.port).toBe(8081);
    expect(cp.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/gateway');
    expect(loadWriterConfig({}).concurrency).toBeGreaterThan(0);
    expect(cp).toMatchObject({ production: false, seedDemo: true, sessionMaxAgeHours: 24, adminPasswordFile: '.gateway/admin-password' });
  });

  it('binds the management API to loopback unless CONTROL_HOST says otherwise, and keeps metrics on their own port', () => {
    expect(loadControlPlaneConfig({})).toMatchObject({ host: '127.0.0.1', metricsPort: 9465 });
    expect(loadControlPlaneConfig({ CONTROL_HOST: '0.0.0.0', CONTROL_METRICS_PORT: '9000' })).toMatchObject({ host: '0.0.0.0', metricsPort: 9000 });
  });

  it('reads single sign-on: both OIDC_ISSUER and OIDC_CLIENT_ID or neither', () => {
    expect(loadControlPlaneConfig({})).toMatchObject({ oidc: null, passwordSignin: true });
    expect(
      loadControlPlaneConfig({
        OIDC_ISSUER: 'https://login.example.com',
        OIDC_CLIENT_ID: 'gw',
        OIDC_ALLOWED_DOMAINS: 'Example.com, @corp.example',
        OIDC_ADMIN_GROUPS: 'admins,ops',
        PASSWORD_SIGNIN: 'false',
      }),
    ).toMatchObject({
      passwordSignin: false,
      oidc: { issuer: 'https://login.example.com', clientId: 'gw', clientSecret: undefined, allowedDomains: ['example.com', 'corp.example'], adminGroups: ['admins', 'ops'], groupsClaim: 'groups' },
    });
    expect(() => loadControlPlaneConfig({ OIDC_ISSUER: 'https://login.example.com' })).toThrow(/OIDC_CLIENT_ID/);
    expect(() => loadControlPlaneConfig({ OIDC_CLIENT_ID: 'gw' })).toThrow(/OIDC_ISSUER/);
    expect(() => loadControlPlaneConfig({ OIDC_ISSUER: 'login.example.com', OIDC_CLIENT_ID: 'gw' })).toThrow(/OIDC_ISSUER is not a URL/);
    expect(() => loadControlPlaneConfig({ OIDC_ISSUER: 'http://login.example.com', OIDC_CLIENT_ID: 'gw' })).toThrow(/OIDC_ISSUER must use https:/);
    expect(loadControlPlaneConfig({ OIDC_ISSUER: 'http://127.0.0.1:9000', OIDC_CLIENT_ID: 'gw' }).oidc?.issuer).toBe('http://127.0.0.1:9000');
  });

  it('seeds no demo in production unless DEMO_SEED asks for it', () => {
    expect(loadControlPlaneConfig({ NODE_ENV: 'production' })).toMatchObject({ production: true, seedDemo: false });
    expect(loadControlPlaneConfig({ NODE_ENV: 'production', DEMO_SEED: 'true' }).seedDemo).toBe(true);
    expect(loadControlPlaneConfig({ NODE_ENV: 'test' })).toMatchObject({ production: false, seedDemo: true });
    expect(() => loadControlPlaneConfig({ SESSION_MAX_AGE_HOURS: '0' })).toThrow(/SESSION_MAX_AGE_HOURS must be between 1 and/);
  });

  it('rejects malformed values with the variable name', () => {
    expect(() => loadProxyConfig({ PROXY_PORT: 'eighty' })).toThrow(new ConfigError('PROXY_PORT must be an integer, got "eighty"'));
    expect(() => loadProxyConfig({ PROXY_PORT: '70000' })).toThrow(/PROXY_PORT must be between 0 and 65535/);
    expect(() => loadProxyConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL must use redis: or rediss:/);
    expect(() => loadControlPlaneConfig({ DATABASE_URL: 'nope' })).toThrow(/DATABASE_URL is not a URL/);
    expect(() => loadControlPlaneConfig({ DEMO_SEED: 'maybe' })).toThrow(/DEMO_SEED must be true or false/);
    expect(() => loadProxyConfig({ TRUST_PROXY: '10.0.0.0/8, lb.internal' })).toThrow(new ConfigError('TRUST_PROXY: "lb.internal" is not an IP address or CIDR; give addresses or CIDRs, comma-separated'));
  });

  it('reads TRUST_PROXY for both HTTP services; nobody is trusted without it', () => {
    expect(loadProxyConfig({}).trustProxy.trusts('127.0.0.1')).toBe(false);
    expect(loadControlPlaneConfig({}).trustProxy.entries).toEqual([]);
    for (const config of [loadProxyConfig({ TRUST_PROXY: '127.0.0.1,fd00::/8' }), loadControlPlaneConfig({ TRUST_PROXY: '127.0.0.1,fd00::/8' })]) {
      expect(config.trustProxy.entries).toEqual(['127.0.0.1', 'fd00::/8']);
      expect(config.trustProxy.trusts('fd00::1')).toBe(true);
    }
  });

  it('reads the invalidation stream settings: both or neither, and a token long enough to guess at nothing', () => {
    expect(loadProxyConfig({})).toMatchObject({ controlPlaneUrl: undefined, internalToken: undefined });
    const token = 'x'.repeat(32);
    expect(loadProxyConfig({ CONTROL_PLANE_URL: 'http://cp:8081/', INTERNAL_TOKEN: token })).toMatchObject({ controlPlaneUrl: 'http://cp:8081', internalToken: token });
    expect(() => loadProxyConfig({ CONTROL_PLANE_URL: 'http://cp:8081' })).toThrow(/INTERNAL_TOKEN is not/);
    expect(() => loadProxyConfig({ CONTROL_PLANE_URL: 'ftp://cp', INTERNAL_TOKEN: token })).toThrow(/CONTROL_PLANE_URL must use http: or https:/);
    expect(() => loadControlPlaneConfig({ INTERNAL_TOKEN: 'short' })).toThrow(/INTERNAL_TOKEN must be at least 16/);
    expect(loadControlPlaneConfig({ INTERNAL_TOKEN: token }).internalToken).toBe(token);
  });
});

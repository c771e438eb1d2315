import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadCorsConfig } from './cors-config.js';
import { loadProxyConfig } from './service-config.js';

describe('CORS_ORIGINS', () => {
  it('is off when unset or empty', () => {
    expect(loadCorsConfig({})).toBeNull();
    expect(loadCorsConfig({ CORS_ORIGINS: ' ' })).toBeNull();
    expect(loadProxyConfig({}).cors).toBeNull();
  });

  it('reads a list of origins as browsers send them', () => {
    expect(loadCorsConfig({ CORS_ORIGINS: 'https://App.Example.com, http://localhost:5173,https://app.example.com:443' })).toEqual({
      origins: ['https://app.example.com', 'http://localhost:5173'],
      credentials: false,
    });
    expect(loadCorsConfig({ CORS_ORIGINS: 'https://app.example.com', CORS_CREDENTIALS: 'true' })?.credentials).toBe(true);
  });

  it('takes * without credentials, and refuses it with them at start', () => {
    expect(loadCorsConfig({ CORS_ORIGINS: '*' })).toEqual({ origins: '*', credentials: false });
    expect(() => loadProxyConfig({ CORS_ORIGINS: '*', CORS_CREDENTIALS: 'true' })).toThrow(ConfigError);
    expect(() => loadProxyConfig({ CORS_ORIGINS: '*', CORS_CREDENTIALS: 'true' })).toThrow(/CORS_CREDENTIALS/);
    expect(() => loadCorsConfig({ CORS_ORIGINS: '*, https://app.example.com' })).toThrow(/cannot be listed with others/);
  });

  it('refuses what is not an origin, naming it', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://files.example.com', 'https://app.example.com?x=1']) {
      expect(() => loadCorsConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
    }
  });
});

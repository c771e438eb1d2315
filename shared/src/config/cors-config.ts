import { ConfigError, envBool, envOptional, type Env } from './env.js';

/**
 * Browser access to the proxy (CORS_ORIGINS, CORS_CREDENTIALS), decided once at start: unset, the
 * proxy answers no preflight and adds no header. A wildcard cannot be combined with credentials —
 * browsers refuse that pair, and it would hand every site a user's cookies — so it stops the start.
 */
export interface CorsConfig {
  /** `*`, or the allowed origins as browsers send them (`https://app.example.com`). */
  origins: '*' | readonly string[];
  /** Answer Access-Control-Allow-Credentials: true (cookies or TLS client certificates). */
  credentials: boolean;
}

export function loadCorsConfig(env: Env): CorsConfig | null {
  const raw = envOptional(env, 'CORS_ORIGINS');
  const credentials = envBool(env, 'CORS_CREDENTIALS', false);
  if (raw === undefined || raw.trim() === '') return null;
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError('CORS_ORIGINS: `*` allows every origin and cannot be listed with others');
    if (credentials) throw new ConfigError('CORS_ORIGINS=* cannot be used with CORS_CREDENTIALS=true: list the origins that may send credentials');
    return { origins: '*', credentials };
  }
  return { origins: [...new Set(entries.map(origin))], credentials };
}

/** An origin as a browser sends it: scheme, host and port only, the default port left out. */
function origin(entry: string): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an origin; write it as https://app.example.com`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || entry.endsWith('/')) {
    throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an origin (scheme, host and port only, no path), e.g. https://app.example.com`);
  }
  return url.origin;
}

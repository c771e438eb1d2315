import { ConfigError, type Env } from './env.js';

/**
 * Values that are public because this repository publishes them: the example manifests'
 * `CHANGE-ME…` and the development overlay's `dev-only-placeholder…`. Anything they protect is
 * not protected, so a production process refuses to start with one, naming the variable (never
 * the value: a real secret could merely contain the marker).
 */
const PLACEHOLDER = /(?:^|[^a-z])change-?me(?:[^a-z]|$)|dev-only-placeholder/i;
/** Where secrets live: the gateway's own (JWT_SECRET, DATABASE_URL, …) and providers' `${VAR}` keys. */
const SECRET_NAME = /(?:SECRET|SECRETS|TOKEN|PASSWORD|_KEY|_URL)$/;

export function refusePlaceholderSecrets(env: Env): void {
  if (env.NODE_ENV !== 'production') return;
  const names = Object.keys(env)
    .filter((name) => SECRET_NAME.test(name) && PLACEHOLDER.test(env[name] ?? ''))
    .sort();
  if (names.length === 0) return;
  throw new ConfigError(
    `${names.join(', ')} ${names.length === 1 ? 'holds' : 'hold'} a placeholder value from the example configuration; ` +
      'set a real secret (e.g. openssl rand -hex 32) before starting with NODE_ENV=production',
  );
}

import { UsageError } from './cli-errors.js';

/** A server's base URL from a flag: http(s), no credentials (they would land in the config file), no query, no trailing slash. */
export function baseUrl(given: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--${flag}: "${given}" is not a URL; e.g. http://127.0.0.1:8081`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--${flag} must be an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`--${flag} must not hold a user name or password`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

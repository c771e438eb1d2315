import { DEFAULT_CACHE_TTL_SECONDS, MAX_CACHE_TTL_SECONDS } from '@gateway/shared';

/**
 * The project's `cache` field as the API takes it (DESIGN §7 "Response cache"): the mode and the
 * entries' life, replaced as a whole on PATCH (`ttl_seconds` left out is the default); null puts
 * the default back (off). A bad value is a 400 naming the field (`cache.ttl_seconds`, say).
 */
export const cacheSettingSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['mode'],
  description: 'The response cache: `exact` replays the answer to a request with the same canonical body (docs/caching.md); `off` (the default) never does. Replaced as a whole; null means off.',
  properties: {
    mode: { type: 'string', enum: ['off', 'exact'], description: '`off` or `exact`.' },
    ttl_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_CACHE_TTL_SECONDS,
      default: DEFAULT_CACHE_TTL_SECONDS,
      description: `Seconds an entry is served after it was stored (1..${MAX_CACHE_TTL_SECONDS}; default ${DEFAULT_CACHE_TTL_SECONDS}).`,
    },
  },
} as const;

/** As answered: always present, off by default. */
export const cacheSettingAnswer = {
  type: 'object',
  required: ['mode', 'ttl_seconds'],
  description: 'The response cache setting (docs/caching.md).',
  properties: { mode: { type: 'string', enum: ['off', 'exact'] }, ttl_seconds: { type: 'integer' } },
} as const;

import { availableParallelism } from 'node:os';
import { parseTrustedProxies, type TrustedProxies } from '../net/trusted-proxies.js';
import { redisTarget, type RedisTarget } from '../redis-target.js';
import { refusePlaceholderSecrets } from './placeholder-secrets.js';
import { ConfigError, envBool, envInt, envOptional, envPort, envString, envUrl, type Env } from './env.js';
import { loadCorsConfig, type CorsConfig } from './cors-config.js';

/**
 * Settings of each process, read once at start from the environment. Defaults are DESIGN §2's;
 * the README's configuration table lists every variable named here.
 */
export interface CommonConfig {
  redisUrl: string;
  /** Where Redis is: REDIS_URL, or a cluster (REDIS_CLUSTER_NODES) or Sentinel (REDIS_SENTINELS); connect through this. */
  redis: RedisTarget;
  /** Prefix of every Redis key, channel and queue (RedisKeys). */
  redisPrefix: string;
  logLevel: string;
  /** How long a starting process waits for Redis and PostgreSQL before it gives up. */
  startupTimeoutMs: number;
}

/** What the HTTP-facing services share. */
export interface ListenerConfig {
  /** Peers whose X-Forwarded-For is believed (TRUST_PROXY); nobody by default. */
  trustProxy: TrustedProxies;
}

export interface ProxyConfig extends CommonConfig, ListenerConfig {
  host: string;
  port: number;
  /** Port of /metrics (with /healthz and /readyz), kept off the public port; 0 picks a free one. */
  metricsPort: number;
  /** Data planes (worker threads) sharing the port; 1 runs the proxy on the main thread. */
  workers: number;
  maxBodyBytes: number;
  /** Browser access (CORS_ORIGINS); null: no CORS headers, no preflight answered. */
  cors: CorsConfig | null;
  /** Failed authentications one client address may make per 10 s window before it is throttled; 0: no throttle. */
  authFailureLimit: number;
  drainTimeoutMs: number;
  /** Where the proxy writes the wall-clock breakdown of its requests when it stops (STEP_TIMES_FILE, a bench flag); undefined: no step clock. */
  stepTimesFile: string | undefined;
  /** Records per BullMQ job. */
  recordBatchSize: number;
  /** Record queues (RECORD_QUEUES); each proxy worker sends to one of them, picked at start. */
  recordQueues: number;
  /** Longest a record waits in the buffer before its batch is sent. */
  recordFlushMs: number;
  /** Records held in memory while Redis is away before the oldest are dropped (and counted). */
  recordBufferMax: number;
  /** How long cached keys are still served after the invalidation channel is lost (then 503). */
  keyStaleBoundMs: number;
  /** Largest block of quota tokens one proxy leases at a time. */
  quotaLeaseTokens: number;
  /** Largest block of a budget one proxy leases at a time, US cents. */
  budgetLeaseCents: number;
  /** Percent of a quota or budget each proxy may still admit per Redis outage once its lease is spent. */
  outageAllowancePercent: number;
  /** Output tokens reserved for a request with no max_tokens, in projects without a cap. */
  defaultReservationTokens: number;
  /** Largest answer the response cache stores (bytes of the stored body); larger ones are served, not stored. */
  cacheMaxEntryBytes: number;
  /** Memory each proxy worker keeps response-cache entries in, besides Redis; 0: none (every hit reads Redis). */
  cacheLocalBytes: number;
  /** Control plane whose invalidation log stream the proxy follows (the second channel); unset: Redis only. */
  controlPlaneUrl: string | undefined;
  /** Shared secret of the control plane's internal routes. */
  internalToken: string | undefined;
  /** Webhook guards may be called at private, loopback and other non-public addresses (tests, labs). */
  guardrailWebhookAllowPrivate: boolean;
  /** Largest batch input file (BATCH_FILE_MAX_BYTES), refused while it is read. */
  batchFileMaxBytes: number;
  /** Most request lines in one batch input file (BATCH_MAX_LINES). */
  batchMaxLines: number;
  /** How often a provider's own batch is polled (BATCH_POLL_MS). */
  batchPollMs: number;
  /** Lines of one batch in flight at once on one worker (BATCH_LINE_CONCURRENCY). */
  batchLineConcurrency: number;
  /** How long a batch's runner may go silent before another takes the batch over (BATCH_LOCK_MS). */
  batchLockMs: number;
}

export interface ControlPlaneConfig extends CommonConfig, ListenerConfig {
  host: string;
  port: number;
  databaseUrl: string;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  jwtSecret: string | undefined;
  /** Former JWT_SECRET values: tokens they signed verify until they expire. Comma-separated. */
  jwtPreviousSecrets: string[];
  /** NODE_ENV=production: no demo data by default, a generated admin password goes to a file. */
  production: boolean;
  /** Create a demo project and key on the first start with an empty database. */
  seedDemo: boolean;
  /** Where a generated admin password is written (mode 0600) in production instead of the console. */
  adminPasswordFile: string;
  /** Refresh is refused this long after the sign-in that began the session; no token outlives it. */
  sessionMaxAgeHours: number;
  /** Proxy address printed in the demo curl line. */
  publicGatewayUrl: string;
  /** How often quota ledgers are reconciled with Postgres. */
  quotaReconcileMs: number;
  /** Webhook URLs may point at private, loopback and other non-public addresses (tests, labs). */
  webhookAllowPrivate: boolean;
  /** Shared secret the proxies present on the internal routes; unset: those routes refuse everyone. */
  internalToken: string | undefined;
  /** Port of the control plane's /metrics (with /healthz and /readyz), off the management port; 0 picks a free one. */
  metricsPort: number;
  /** PASSWORD_SIGNIN=false: only single sign-on signs in (the break-glass `npm run admin` still works). */
  passwordSignin: boolean;
  /** Single sign-on through an OpenID provider; null when OIDC_ISSUER is unset. */
  oidc: OidcConfig | null;
  /** Development only: where a generated JWT_SECRET is kept (mode 0600) so a restart keeps sessions. */
  jwtSecretFile: string;
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  /** Unset: a public client (PKCE alone). */
  clientSecret: string | undefined;
  /** Lower-case email domains allowed to sign in; empty: any domain the provider vouches for. */
  allowedDomains: string[];
  /** Groups whose members get the account role `admin` when their account is created. */
  adminGroups: string[];
  /** The ID token / userinfo claim that lists the user's groups. */
  groupsClaim: string;
  /** The callback URL registered at the provider; unset: derived from the request. */
  redirectUri: string | undefined;
}

export interface WriterConfig extends CommonConfig {
  databaseUrl: string;
  /** Batches written at once by one writer process. */
  concurrency: number;
  /** Record queues (RECORD_QUEUES) the writer takes batches from: all of them. */
  recordQueues: number;
  /** Port of the writer's /metrics, /healthz and /readyz listener; 0 disables it. */
  port: number;
  /** Webhook deliveries may go to private, loopback and other non-public addresses (tests, labs). */
  webhookAllowPrivate: boolean;
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** Relative to the control plane's working directory. */
export const DEFAULT_ADMIN_PASSWORD_FILE = '.gateway/admin-password';
/** Beside the admin password file: the development JWT secret (see jwtServiceFromConfig). */
export const DEFAULT_JWT_SECRET_FILE = '.gateway/jwt-secret';

function common(env: Env): CommonConfig {
  refusePlaceholderSecrets(env);
  const redisUrl = envUrl(env, 'REDIS_URL', DEFAULT_REDIS_URL, ['redis:', 'rediss:']);
  return {
    redisUrl,
    redis: redisTarget({
      url: redisUrl,
      clusterNodes: envOptional(env, 'REDIS_CLUSTER_NODES'),
      sentinels: envOptional(env, 'REDIS_SENTINELS'),
      sentinelName: envOptional(env, 'REDIS_SENTINEL_NAME'),
      sentinelPassword: envOptional(env, 'REDIS_SENTINEL_PASSWORD'),
    }),
    redisPrefix: envString(env, 'REDIS_PREFIX', 'gw:'),
    logLevel: envString(env, 'LOG_LEVEL', 'info'),
    startupTimeoutMs: envInt(env, 'STARTUP_TIMEOUT_MS', 60_000, 0, 24 * 3_600_000),
  };
}

function listener(env: Env): ListenerConfig {
  try {
    return { trustProxy: parseTrustedProxies(envOptional(env, 'TRUST_PROXY')) };
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY: ${(err as Error).message}; give addresses or CIDRs, comma-separated`);
  }
}

export function loadProxyConfig(env: Env): ProxyConfig {
  return {
    ...common(env),
    ...listener(env),
    host: envString(env, 'PROXY_HOST', '0.0.0.0'),
    port: envPort(env, 'PROXY_PORT', 8080),
    metricsPort: envPort(env, 'METRICS_PORT', 9464),
    workers: envInt(env, 'PROXY_WORKERS', availableParallelism(), 1, 256),
    maxBodyBytes: envInt(env, 'MAX_BODY_BYTES', 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    authFailureLimit: envInt(env, 'AUTH_FAILURE_LIMIT', 50, 0, 1_000_000),
    cors: loadCorsConfig(env),
    drainTimeoutMs: envInt(env, 'DRAIN_TIMEOUT_MS', 10_000, 0, 600_000),
    stepTimesFile: envOptional(env, 'STEP_TIMES_FILE'),
    recordBatchSize: envInt(env, 'RECORD_BATCH_SIZE', 500, 1, 10_000),
    recordQueues: envInt(env, 'RECORD_QUEUES', 1, 1, 64),
    recordFlushMs: envInt(env, 'RECORD_FLUSH_MS', 10, 1, 10_000),
    recordBufferMax: envInt(env, 'RECORD_BUFFER_MAX', 250_000, 1_000, 10_000_000),
    keyStaleBoundMs: envInt(env, 'KEY_STALE_BOUND_MS', 1_000, 0, 60_000),
    quotaLeaseTokens: envInt(env, 'QUOTA_LEASE_TOKENS', 20_000, 1, 100_000_000),
    budgetLeaseCents: envInt(env, 'BUDGET_LEASE_CENTS', 100, 1, 100_000_000),
    outageAllowancePercent: envInt(env, 'OUTAGE_ALLOWANCE_PERCENT', 2, 0, 100),
    defaultReservationTokens: envInt(env, 'DEFAULT_RESERVATION_TOKENS', 1_024, 0, 10_000_000),
    cacheMaxEntryBytes: envInt(env, 'CACHE_MAX_ENTRY_BYTES', 256 * 1024, 1, 64 * 1024 * 1024),
    cacheLocalBytes: envInt(env, 'CACHE_LOCAL_BYTES', 32 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    guardrailWebhookAllowPrivate: envBool(env, 'GUARDRAIL_WEBHOOK_ALLOW_PRIVATE', false),
    batchFileMaxBytes: envInt(env, 'BATCH_FILE_MAX_BYTES', 200 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
    batchMaxLines: envInt(env, 'BATCH_MAX_LINES', 50_000, 1, 1_000_000),
    batchPollMs: envInt(env, 'BATCH_POLL_MS', 30_000, 10, 3_600_000),
    batchLineConcurrency: envInt(env, 'BATCH_LINE_CONCURRENCY', 64, 1, 4_096),
    batchLockMs: envInt(env, 'BATCH_LOCK_MS', 30_000, 1_000, 600_000),
    ...invalidationStream(env),
  };
}

export function loadControlPlaneConfig(env: Env): ControlPlaneConfig {
  const port = envPort(env, 'PROXY_PORT', 8080);
  const production = envString(env, 'NODE_ENV', 'development') === 'production';
  return {
    ...common(env),
    ...listener(env),
    // Loopback unless told: `npm start` on a laptop is not reachable from the network; the
    // container image and the manifests set CONTROL_HOST=0.0.0.0.
    host: envString(env, 'CONTROL_HOST', '127.0.0.1'),
    port: envPort(env, 'CONTROL_PORT', 8081),
    databaseUrl: envUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']),
    adminEmail: envOptional(env, 'ADMIN_EMAIL'),
    adminPassword: envOptional(env, 'ADMIN_PASSWORD'),
    jwtSecret: envOptional(env, 'JWT_SECRET'),
    jwtPreviousSecrets: (envOptional(env, 'JWT_PREVIOUS_SECRETS') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    production,
    seedDemo: envBool(env, 'DEMO_SEED', !production),
    adminPasswordFile: envString(env, 'ADMIN_PASSWORD_FILE', DEFAULT_ADMIN_PASSWORD_FILE),
    sessionMaxAgeHours: envInt(env, 'SESSION_MAX_AGE_HOURS', 24, 1, 24 * 366),
    publicGatewayUrl: envString(env, 'PUBLIC_GATEWAY_URL', `http://127.0.0.1:${port}`),
    quotaReconcileMs: envInt(env, 'QUOTA_RECONCILE_MS', 30_000, 100, 3_600_000),
    webhookAllowPrivate: envBool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    internalToken: internalToken(env),
    metricsPort: envPort(env, 'CONTROL_METRICS_PORT', 9465),
    passwordSignin: envBool(env, 'PASSWORD_SIGNIN', true),
    oidc: oidcConfig(env),
    jwtSecretFile: envString(env, 'JWT_SECRET_FILE', DEFAULT_JWT_SECRET_FILE),
  };
}

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function oidcConfig(env: Env): OidcConfig | null {
  const issuer = envOptional(env, 'OIDC_ISSUER');
  const clientId = envOptional(env, 'OIDC_CLIENT_ID');
  if (issuer === undefined) {
    if (clientId !== undefined) throw new ConfigError('OIDC_CLIENT_ID is set but OIDC_ISSUER is not; single sign-on needs both');
    return null;
  }
  if (clientId === undefined) throw new ConfigError('OIDC_ISSUER is set but OIDC_CLIENT_ID is not; single sign-on needs both');
  const redirectUri = envOptional(env, 'OIDC_REDIRECT_URI');
  const issuerUrl = new URL(envUrl(env, 'OIDC_ISSUER', issuer, ['https:', 'http:']));
  // Codes and tokens cross this connection: plain HTTP only to a provider on this machine.
  if (issuerUrl.protocol === 'http:' && !['localhost', '[::1]'].includes(issuerUrl.hostname) && !issuerUrl.hostname.startsWith('127.')) {
    throw new ConfigError('OIDC_ISSUER must use https: (plain http: only for a provider on this machine)');
  }
  return {
    issuer,
    clientId,
    clientSecret: envOptional(env, 'OIDC_CLIENT_SECRET'),
    allowedDomains: list(envOptional(env, 'OIDC_ALLOWED_DOMAINS')).map((d) => d.toLowerCase().replace(/^@/, '')),
    adminGroups: list(envOptional(env, 'OIDC_ADMIN_GROUPS')),
    groupsClaim: envString(env, 'OIDC_GROUPS_CLAIM', 'groups'),
    redirectUri: redirectUri === undefined ? undefined : envUrl(env, 'OIDC_REDIRECT_URI', redirectUri, ['https:', 'http:']),
  };
}

function internalToken(env: Env): string | undefined {
  const token = envOptional(env, 'INTERNAL_TOKEN');
  if (token !== undefined && token.length < 16) throw new ConfigError('INTERNAL_TOKEN must be at least 16 characters');
  return token;
}

/** The proxy's second invalidation channel: both variables or neither. */
function invalidationStream(env: Env): { controlPlaneUrl: string | undefined; internalToken: string | undefined } {
  const url = envOptional(env, 'CONTROL_PLANE_URL');
  const token = internalToken(env);
  if (url === undefined) return { controlPlaneUrl: undefined, internalToken: token };
  if (token === undefined) throw new ConfigError('CONTROL_PLANE_URL is set but INTERNAL_TOKEN is not; the invalidation stream needs both');
  return { controlPlaneUrl: envUrl(env, 'CONTROL_PLANE_URL', url, ['http:', 'https:']).replace(/\/+$/, ''), internalToken: token };
}

export function loadWriterConfig(env: Env): WriterConfig {
  return {
    ...common(env),
    databaseUrl: envUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres:', 'postgresql:']),
    concurrency: envInt(env, 'WRITER_CONCURRENCY', 4, 1, 64),
    recordQueues: envInt(env, 'RECORD_QUEUES', 1, 1, 64),
    port: envPort(env, 'WRITER_PORT', 8082),
    webhookAllowPrivate: envBool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
  };
}

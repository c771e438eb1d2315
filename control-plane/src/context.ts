import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ControlPlaneConfig, RedisClient, RedisKeys, ServedModel } from '@gateway/shared';
import type { JwtService } from './auth/jwt.js';
import type { OidcSignin } from './auth/oidc.js';
import type { SigninThrottle } from './auth/signin-throttle.js';
import type { Db } from './db/connect.js';
import type { CursorCodec } from './http/cursor.js';
import type { InvalidationFeed } from './keys/invalidation-log.js';
import type { KeyProjection } from './keys/projection.js';
import type { WebhookEmitter } from './webhooks/webhook-emitter.js';
import type { ServiceTracer } from './tracing/service-tracer.js';

/** What every route and service of the control plane works with, built once in control-plane.ts. */
export interface AppContext {
  config: ControlPlaneConfig;
  sql: Db;
  redis: RedisClient;
  keys: RedisKeys;
  projection: KeyProjection;
  /** Wakes the internal invalidation streams when the log may have grown. */
  invalidations: InvalidationFeed;
  jwt: JwtService;
  cursors: CursorCodec;
  signinThrottle: SigninThrottle;
  log: Logger;
  metrics: Registry;
  webhooks: WebhookEmitter;
  /** Null when tracing is off. */
  tracer: ServiceTracer | null;
  /** Single sign-on; null when OIDC_ISSUER is unset. */
  oidc: OidcSignin | null;
  /** The model ids of the providers file the proxies serve (GATEWAY_CONFIG), read at start. */
  servedModels: ServedModel[];
}

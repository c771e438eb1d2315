import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, GatewayError } from '@gateway/shared';
import { startSession, type IssuedToken } from '../../auth/jwt.js';
import { decoyHash, hashPassword, hasPassword, needsRehash, verifyPassword } from '../../auth/passwords.js';
import { clearRefreshCookie, CSRF_HEADER, refreshCookieOf, setRefreshCookie } from '../../auth/refresh-cookie.js';
import { authenticate, bearerToken, principalOfClaims, type Principal } from '../../auth/require-auth.js';
import { beginSession } from '../../auth/session-begin.js';
import { signOutSession } from '../../auth/session-signouts.js';
import { throttledAccount } from '../../auth/signin-throttle.js';
import type { AppContext } from '../../context.js';
import { writeAudit, type ManagementEvent } from '../../db/audit-writer.js';
import { rotateRefreshToken } from '../../db/refresh-tokens.js';
import { findUserForSignin, upgradePasswordHash } from '../../db/users.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, ref } from '../schemas.js';

/**
 * POST /v1/signins: the password grant trades an email and password for a one-hour token and
 * begins a session; the refresh grant trades a current, unexpired token for a new one of the same
 * session, which ends SESSION_MAX_AGE_HOURS after its sign-in. Every attempt is audited
 * (signin.succeeded, signin.refreshed, signin.failed) without the password or the token. A wrong
 * password and an unknown email get the same answer after the same amount of work, and failed
 * attempts are throttled per account and per client address.
 *
 * The dashboard asks the password grant for `refresh_cookie: true` and then refreshes with that
 * httpOnly cookie instead of a bearer (see auth/refresh-cookie.ts), so a reload keeps the session
 * while the access token never leaves the page's memory. Each refresh with the cookie replaces it
 * by a new one; presenting one already replaced means two parties hold the session, and it ends
 * (signin.refresh_reused).
 *
 * PASSWORD_SIGNIN=false leaves single sign-on (oidc-signins.ts) as the only way in, except for the
 * break-glass accounts `npm run admin` made.
 */
interface SigninBody {
  grant_type: 'password' | 'refresh';
  email?: string;
  password?: string;
  refresh_cookie?: boolean;
}

export function registerSigninRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: SigninBody }>(
    '/v1/signins',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign in (password grant) or refresh a token (refresh grant)',
        description:
          '`{"grant_type":"password","email","password"}`, or `{"grant_type":"refresh"}` with the current, unexpired token as ' +
          '`Authorization: Bearer`. Too many failed sign-ins for one email or from one address get 429 RATE_LIMITED with Retry-After. ' +
          'A disabled account cannot sign in. Refresh is refused once the session (begun by the password grant) is ' +
          'SESSION_MAX_AGE_HOURS old, and no token outlives its session: `expires_in` may be under 3600. ' +
          'With `"refresh_cookie": true` the password grant also sets an httpOnly, SameSite=Strict cookie scoped to this path; ' +
          'a refresh grant without a bearer then uses that cookie, and must carry an `X-Requested-With` header (403 otherwise). ' +
          'Each refresh with the cookie replaces it (rotation); a cookie already replaced ends the session (401, audited `signin.refresh_reused`). ' +
          'POST /v1/signouts clears the cookie. With PASSWORD_SIGNIN=false the password grant gets 403 FORBIDDEN (sign in with single sign-on, ' +
          '`GET /v1/signins/oidc`) except for break-glass accounts made by `npm run admin`.',
        security: [],
        body: {
          type: 'object',
          required: ['grant_type'],
          additionalProperties: false,
          properties: {
            grant_type: { type: 'string', enum: ['password', 'refresh'] },
            email: { type: 'string', minLength: 1, maxLength: 254 },
            password: { type: 'string', minLength: 1, maxLength: 1024 },
            refresh_cookie: { type: 'boolean', description: 'Password grant: also set the session cookie (for browsers).' },
          },
          if: { properties: { grant_type: { const: 'password' } } },
          then: { required: ['email', 'password'] },
        },
        response: { 200: ref('Token'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => (req.body.grant_type === 'password' ? passwordGrant(ctx, req, reply) : refreshGrant(ctx, req, reply)),
  );
}

async function passwordGrant(ctx: AppContext, req: FastifyRequest<{ Body: SigninBody }>, reply: FastifyReply): Promise<IssuedToken> {
  const email = req.body.email ?? '';
  const password = req.body.password ?? '';
  const audit = (event: Omit<ManagementEvent, 'type'> & { type?: string }) =>
    writeAudit(ctx.sql, { type: 'signin.failed', ...event }, requestFacts(req, reply));
  // Taken before the account is read: a password change that lands while this sign-in checks the
  // old password sets an instant after this one, and so ends the session this sign-in begins.
  const session = startSession();

  const lookup = await findUserForSignin(ctx.sql, email);
  const user = lookup.user;
  const account = throttledAccount(lookup);
  const verdict = await ctx.signinThrottle.attempt(account, req.ip);
  if (!verdict.allowed) {
    await audit({ outcome: 'policy_blocked', status: 429, errorCode: 'RATE_LIMITED', actor: user?.id ?? null });
    throw Errors.signinThrottled(verdict.retryAfterSeconds);
  }
  // An unknown email costs the same scrypt work as a wrong password, so timing does not tell them apart.
  // So does an account without a password (made by single sign-on).
  const stored = user !== null && hasPassword(user.password_hash) ? user.password_hash : null;
  const valid = (await verifyPassword(password, stored ?? (await decoyHash()))) && stored !== null;
  if (user === null || !valid) {
    await audit({ outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: user?.id ?? null });
    throw Errors.badCredentials();
  }
  await ctx.signinThrottle.succeeded(account, req.ip);
  if (user.disabled) {
    await audit({ outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: user.id });
    throw Errors.accountDisabled();
  }
  if (!ctx.config.passwordSignin && !user.break_glass) {
    await audit({ outcome: 'policy_blocked', status: 403, errorCode: 'FORBIDDEN', actor: user.id });
    throw Errors.passwordSigninOff();
  }
  // The one moment the password is known: a hash made at an older, cheaper cost is replaced.
  if (needsRehash(user.password_hash)) await upgradePasswordHash(ctx.sql, user.id, user.password_hash, await hashPassword(password));
  const token = await beginSession(ctx, req, reply, user.id, session, { cookie: req.body.refresh_cookie === true });
  await audit({ type: 'signin.succeeded', outcome: 'success', status: 200, actor: user.id });
  return token;
}

async function refreshGrant(ctx: AppContext, req: FastifyRequest<{ Body: SigninBody }>, reply: FastifyReply): Promise<IssuedToken> {
  if (req.body.email !== undefined || req.body.password !== undefined || req.body.refresh_cookie !== undefined) {
    throw Errors.refreshGrantWithCredentials();
  }
  // A bearer wins over the cookie: API clients and gatewayctl refresh as they always have.
  const bearer = bearerToken(req);
  const cookie = bearer === null ? refreshCookieOf(req) : null;
  // The dashboard asks on every load whether a session exists; "none" names no one to audit.
  if (bearer === null && cookie === null) {
    throw Errors.noSessionToRefresh();
  }
  if (cookie !== null && req.headers[CSRF_HEADER] === undefined) {
    throw Errors.refreshWithoutCsrfHeader();
  }
  let principal: Principal | null = null;
  let token: IssuedToken;
  try {
    principal = cookie === null ? await authenticate(ctx, req) : await principalOfClaims(ctx, await ctx.jwt.verifyRefresh(cookie));
    if (cookie !== null) await rotateCookie(ctx, req, reply, principal);
    // Same session, so a later sign-out or password change reaches this token too, and the
    // session's end stays where the sign-in put it.
    token = await ctx.jwt.issue(principal.userId, principal.token.session);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'UNAUTHORIZED') {
      // A dead cookie is dropped, so the browser stops sending it.
      if (cookie !== null) clearRefreshCookie(req, reply, ctx.config.trustProxy);
      if (!(err instanceof ReusedRefresh)) {
        await writeAudit(
          ctx.sql,
          { type: 'signin.failed', outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: principal?.userId ?? null },
          requestFacts(req, reply),
        );
      }
    }
    throw err;
  }
  await writeAudit(ctx.sql, { type: 'signin.refreshed', outcome: 'success', status: 200, actor: principal.userId }, requestFacts(req, reply));
  return token;
}

class ReusedRefresh extends GatewayError {
  constructor() {
    super('UNAUTHORIZED', 'This session cookie was already used once, so someone else may hold the session; it has been signed out. Sign in again.');
  }
}

/**
 * Replaces the presented refresh cookie with a new one. A cookie that was already replaced is a
 * copy in two hands (a stolen cookie used by the thief, or by its owner after the thief): the whole
 * session ends, both copies with it, and the event is audited as signin.refresh_reused.
 */
async function rotateCookie(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<void> {
  const session = principal.token.session;
  const next = await ctx.jwt.issueRefresh(principal.userId, session);
  const reused = await ctx.sql.begin(async (tx) => {
    const rotation = await rotateRefreshToken(tx, {
      sessionId: session.id,
      userId: principal.userId,
      usedId: principal.token.tokenId,
      nextId: next.tokenId,
      expiresAt: new Date(ctx.jwt.sessionEnd(session)),
    });
    if (rotation === 'rotated') return false;
    await signOutSession(ctx, tx, principal.userId, principal.token);
    await writeAudit(
      tx,
      { type: 'signin.refresh_reused', outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: principal.userId },
      requestFacts(req, reply),
    );
    return true;
  });
  if (reused) throw new ReusedRefresh();
  setRefreshCookie(req, reply, ctx.config.trustProxy, next.token, next.maxAgeSeconds);
}

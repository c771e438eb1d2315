import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '@gateway/shared';
import { startSession, type IssuedToken } from '../../auth/jwt.js';
import { decoyHash, verifyPassword } from '../../auth/passwords.js';
import { clearRefreshCookie, CSRF_HEADER, refreshCookieOf, setRefreshCookie } from '../../auth/refresh-cookie.js';
import { authenticate, bearerToken, principalOfClaims, type Principal } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit, type ManagementEvent } from '../../db/audit-writer.js';
import { findUserForSignin } from '../../db/users.js';
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
 * while the access token never leaves the page's memory.
 */
interface SigninBody {
  grant_type: 'password' | 'refresh';
  email?: string;
  password?: string;
  refresh_cookie?: boolean;
}

const BAD_CREDENTIALS = 'Wrong email or password.';

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
          'POST /v1/signouts clears the cookie.',
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

  const user = await findUserForSignin(ctx.sql, email);
  const verdict = await ctx.signinThrottle.attempt(email, req.ip);
  if (!verdict.allowed) {
    await audit({ outcome: 'policy_blocked', status: 429, errorCode: 'RATE_LIMITED', actor: user?.id ?? null });
    throw new GatewayError('RATE_LIMITED', 'Too many failed sign-ins; retry later.', { retryAfter: verdict.retryAfterSeconds });
  }
  // An unknown email costs the same scrypt work as a wrong password, so timing does not tell them apart.
  const valid = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
  if (user === null || !valid) {
    await audit({ outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: user?.id ?? null });
    throw new GatewayError('UNAUTHORIZED', BAD_CREDENTIALS);
  }
  await ctx.signinThrottle.succeeded(email, req.ip);
  if (user.disabled) {
    await audit({ outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: user.id });
    throw new GatewayError('UNAUTHORIZED', 'This account is disabled; ask an account admin.');
  }
  const token = await ctx.jwt.issue(user.id, session);
  if (req.body.refresh_cookie === true) {
    const refresh = await ctx.jwt.issueRefresh(user.id, session);
    setRefreshCookie(req, reply, ctx.config.trustProxy, refresh.token, refresh.maxAgeSeconds);
  }
  await audit({ type: 'signin.succeeded', outcome: 'success', status: 200, actor: user.id });
  return token;
}

async function refreshGrant(ctx: AppContext, req: FastifyRequest<{ Body: SigninBody }>, reply: FastifyReply): Promise<IssuedToken> {
  if (req.body.email !== undefined || req.body.password !== undefined || req.body.refresh_cookie !== undefined) {
    throw new GatewayError('INVALID_REQUEST', 'The refresh grant takes no email, password or refresh_cookie; send the current token as the bearer.');
  }
  // A bearer wins over the cookie: API clients and gatewayctl refresh as they always have.
  const bearer = bearerToken(req);
  const cookie = bearer === null ? refreshCookieOf(req) : null;
  // The dashboard asks on every load whether a session exists; "none" names no one to audit.
  if (bearer === null && cookie === null) {
    throw new GatewayError('UNAUTHORIZED', 'No session to refresh: send the current token as "Authorization: Bearer <token>", or sign in.');
  }
  if (cookie !== null && req.headers[CSRF_HEADER] === undefined) {
    throw new GatewayError('FORBIDDEN', 'A refresh with the session cookie must carry an X-Requested-With header.', { param: 'x-requested-with' });
  }
  let principal: Principal | null = null;
  let token: IssuedToken;
  try {
    principal = cookie === null ? await authenticate(ctx, req) : await principalOfClaims(ctx, await ctx.jwt.verifyRefresh(cookie));
    // Same session, so a later sign-out or password change reaches this token too, and the
    // session's end stays where the sign-in put it.
    token = await ctx.jwt.issue(principal.userId, principal.token.session);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'UNAUTHORIZED') {
      // A dead cookie is dropped, so the browser stops sending it.
      if (cookie !== null) clearRefreshCookie(req, reply, ctx.config.trustProxy);
      await writeAudit(
        ctx.sql,
        { type: 'signin.failed', outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: principal?.userId ?? null },
        requestFacts(req, reply),
      );
    }
    throw err;
  }
  await writeAudit(ctx.sql, { type: 'signin.refreshed', outcome: 'success', status: 200, actor: principal.userId }, requestFacts(req, reply));
  return token;
}

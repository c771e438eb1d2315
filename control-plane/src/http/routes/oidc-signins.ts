import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Errors, GatewayError } from '@gateway/shared';
import { startSession } from '../../auth/jwt.js';
import { setFlowCookie, takeFlowCookie } from '../../auth/oidc-flow-cookie.js';
import { OidcRefusal, type OidcIdentity, type OidcSignin } from '../../auth/oidc.js';
import { cameOverHttps } from '../../auth/refresh-cookie.js';
import { beginSession } from '../../auth/session-begin.js';
import { accountForIdentity } from '../../auth/sso-accounts.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import type { UserRow } from '../../db/users.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES } from '../schemas.js';

/**
 * Single sign-on (OIDC_ISSUER): `GET /v1/signins/oidc` sends the browser to the identity provider;
 * the provider sends it back to `GET /v1/signins/oidc/callback`, which signs the person in with the
 * same session a password sign-in begins (the refresh cookie the dashboard lives on) and sends the
 * browser to the dashboard. Accounts are bound to the provider's issuer and subject
 * (sso-accounts.ts): the first sign-in links the account of a verified email or creates one
 * (`member`, or `admin` for OIDC_ADMIN_GROUPS). Refused: emails outside OIDC_ALLOWED_DOMAINS, an
 * existing account's email the provider has not verified, an account bound to another subject,
 * and disabled accounts. Every outcome is audited as signin.succeeded or signin.failed; a refusal
 * lands on the sign-in page with its reason (the `gateway_sso_error` cookie), since a browser, not
 * a program, is at the other end.
 *
 * `GET /v1/signins` tells the sign-in page which ways in exist, before anyone is signed in.
 */
export const OIDC_CALLBACK_PATH = '/v1/signins/oidc/callback';
/** Why the last single sign-on of this browser was refused, for the sign-in page to show once (it deletes it). */
export const SSO_ERROR_COOKIE = 'gateway_sso_error';
const DASHBOARD = '/';

export function registerOidcSigninRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/v1/signins',
    {
      schema: {
        tags: ['auth'],
        summary: 'The ways to sign in here (no token needed)',
        description: '`password`: the password grant of POST /v1/signins is on (PASSWORD_SIGNIN). `sso`: single sign-on is configured (OIDC_ISSUER); start it at GET /v1/signins/oidc.',
        security: [],
        response: {
          200: {
            type: 'object',
            required: ['password', 'sso'],
            additionalProperties: false,
            properties: { password: { type: 'boolean' }, sso: { type: 'boolean' } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async () => ({ password: ctx.config.passwordSignin, sso: ctx.oidc !== null }),
  );

  app.get(
    '/v1/signins/oidc',
    {
      schema: {
        tags: ['auth'],
        summary: 'Start single sign-on: redirects the browser to the identity provider',
        description:
          'Authorization code flow with PKCE, `state` and `nonce`; what the callback checks rides in an encrypted, httpOnly cookie of this browser. ' +
          '404 NOT_FOUND when single sign-on is not configured (OIDC_ISSUER); 503 UNAVAILABLE when the provider cannot be reached.',
        security: [],
        response: { 302: { type: 'null', description: 'To the identity provider.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const oidc = configured(ctx);
      const { url, flow } = await oidc.start(redirectUriOf(ctx, oidc, req));
      await setFlowCookie(req, reply, ctx.jwt, ctx.config.trustProxy, flow);
      return reply.redirect(url.href, 302);
    },
  );

  app.get(
    OIDC_CALLBACK_PATH,
    {
      schema: {
        tags: ['auth'],
        summary: 'Where the identity provider sends the browser back; signs in and redirects to the dashboard',
        description:
          'Checks state, nonce and PKCE, exchanges the code, and begins a session as a password sign-in does (the httpOnly refresh cookie). ' +
          'The account is the one bound to the identity (issuer and subject); an unbound identity links the account of its email only when the provider says `email_verified: true`. ' +
          'Redirects to the dashboard; when the sign-in was refused, with the reason in the short-lived cookie `gateway_sso_error`, for the sign-in page to show (email outside OIDC_ALLOWED_DOMAINS, disabled account, ' +
          "an existing account's email the provider has not verified, an account linked to another identity, a flow started in another browser or over ten minutes ago, …). " +
          '404 NOT_FOUND when single sign-on is not configured.',
        security: [],
        response: { 303: { type: 'null', description: 'To the dashboard.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const oidc = configured(ctx);
      try {
        await callback(ctx, oidc, req, reply);
        return reply.redirect(DASHBOARD, 303);
      } catch (err) {
        const refusal = err instanceof GatewayError ? err : Errors.internal(err);
        if (refusal.status >= 500) req.log.error({ err }, 'single sign-on failed');
        if (!(refusal instanceof AuditedRefusal)) {
          await writeAudit(ctx.sql, { type: 'signin.failed', outcome: outcomeOf(refusal), status: refusal.status, errorCode: refusal.code }, requestFacts(req, reply));
        }
        // The reason rides in a short-lived cookie, not the address: a link of anyone's making
        // could put any text in a query string, but only this answer sets a cookie of this origin.
        void reply.setCookie(SSO_ERROR_COOKIE, refusal.message, { path: '/', maxAge: 60, sameSite: 'lax', secure: cameOverHttps(req, ctx.config.trustProxy) });
        return reply.redirect(DASHBOARD, 303);
      }
    },
  );
}

/** A refusal already audited with its account. */
class AuditedRefusal extends OidcRefusal {}

async function callback(ctx: AppContext, oidc: OidcSignin, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const flow = await takeFlowCookie(req, reply, ctx.jwt, ctx.config.trustProxy);
  if (flow === null) {
    throw new OidcRefusal('UNAUTHORIZED', 'This sign-in was started in another browser, or more than ten minutes ago; start it again.');
  }
  // Taken before the account is read, as a password sign-in does (see signins.ts).
  const session = startSession();
  const identity = await oidc.finish(flow, new URL(req.url, 'http://localhost').search);
  if (!oidc.domainAllowed(identity.email)) {
    throw new OidcRefusal('FORBIDDEN', `${identity.email} may not sign in here: single sign-on is limited to ${oidc.settings.allowedDomains.join(', ')}.`);
  }
  const user = await accountOf(ctx, oidc, identity, req, reply);
  const refuse = async (message: string) => {
    await writeAudit(ctx.sql, { type: 'signin.failed', outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', actor: user.id }, requestFacts(req, reply));
    return new AuditedRefusal('UNAUTHORIZED', message);
  };
  if (user.disabled) throw await refuse('This account is disabled; ask an account admin.');
  await beginSession(ctx, req, reply, user.id, session, { cookie: true });
  await writeAudit(ctx.sql, { type: 'signin.succeeded', outcome: 'success', status: 200, actor: user.id }, requestFacts(req, reply));
}

/**
 * The account of this identity. One made on the first sign-in has no user cap and no password
 * (single sign-on is its way in); its role is set here once and managed in the gateway afterwards.
 * A refusal to link names the account it would have reached as the event's target, with no actor:
 * whoever signed in was not shown to be its owner.
 */
async function accountOf(ctx: AppContext, oidc: OidcSignin, identity: OidcIdentity, req: FastifyRequest, reply: FastifyReply): Promise<UserRow> {
  const found = await accountForIdentity(ctx.sql, identity, {
    role: oidc.roleFor(identity),
    created: async (tx, row) => {
      await writeAudit(tx, { type: 'user.created', outcome: 'success', status: 201, actor: row.id, target: { type: 'user', id: row.id } }, requestFacts(req, reply));
    },
  });
  if (found.outcome === 'refused') {
    // No account to name: audited by the route's handler like any other refusal.
    if (found.user === null) throw new OidcRefusal('FORBIDDEN', found.message);
    const target = { type: 'user', id: found.user.id } as const;
    await writeAudit(ctx.sql, { type: 'signin.failed', outcome: 'auth_failed', status: 401, errorCode: 'UNAUTHORIZED', target }, requestFacts(req, reply));
    // The issuer and subject are what `npm run admin -- link-sso` takes, should the account's owner
    // turn out to be the one who tried.
    ctx.log.warn(
      { user_id: found.user.id, issuer: identity.issuer, subject: identity.subject, reason: found.reason },
      'single sign-on: an identity was not linked to the account of its email',
    );
    throw new AuditedRefusal('UNAUTHORIZED', found.message);
  }
  if (found.outcome === 'created') ctx.log.info({ user_id: found.user.id, role: found.user.role }, 'account created by single sign-on');
  if (found.outcome === 'linked') ctx.log.info({ user_id: found.user.id, issuer: identity.issuer }, 'account linked to a single sign-on identity');
  return found.user;
}

function configured(ctx: AppContext): OidcSignin {
  if (ctx.oidc === null) throw Errors.ssoNotConfigured();
  return ctx.oidc;
}

/** OIDC_REDIRECT_URI, or this route's own address as the browser reached it. */
function redirectUriOf(ctx: AppContext, oidc: OidcSignin, req: FastifyRequest): string {
  if (oidc.settings.redirectUri !== undefined) return oidc.settings.redirectUri;
  const scheme = cameOverHttps(req, ctx.config.trustProxy) ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? `127.0.0.1:${ctx.config.port}`}${OIDC_CALLBACK_PATH}`;
}

function outcomeOf(err: GatewayError): 'auth_failed' | 'policy_blocked' | 'error' {
  if (err.code === 'FORBIDDEN') return 'policy_blocked';
  return err.status >= 500 ? 'error' : 'auth_failed';
}

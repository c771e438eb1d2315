import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type KoaContextWithOidc } from 'oidc-provider';

/**
 * A real OpenID provider (the `oidc-provider` package, certified by the OpenID Foundation) on a free
 * port, for the single sign-on tests. Its login step signs in whoever `signInAs` names, with the
 * claims given, so a test chooses the identity without a login form; consent is granted for the
 * gateway as a first-party client. Everything else (discovery, the authorization endpoint, PKCE,
 * the token endpoint, ID token signing, userinfo) is the provider's own.
 */
export interface TestIdentity {
  sub: string;
  email: string;
  /**
   * Default true. Null: the claim is not sent at all, as Entra ID does not send it; strings are
   * what AWS Cognito's and JumpCloud's userinfo answers send.
   */
  email_verified?: boolean | 'true' | 'false' | null;
  groups?: string[];
  /**
   * Whether the ID token carries the claims itself (as Entra ID's does) rather than the userinfo
   * answer alone (what this provider does by default when it also issues an access token).
   */
  claimsInIdToken?: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next login step signs in. */
  signInAs(identity: TestIdentity): void;
  /** Answer the next login step with this OAuth error instead (the person refused, say). */
  refuseNext(error: string): void;
  close(): Promise<void>;
}

export async function startTestProvider(redirectUris: () => string[]): Promise<TestProvider> {
  const identities = new Map<string, TestIdentity>();
  let next: TestIdentity | null = null;
  let refusal: string | null = null;
  const clientId = 'model-gateway';
  const clientSecret = randomBytes(24).toString('base64url');

  let handler: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) | null = null;
  const server: Server = createServer((req, res) => handler?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const issuer = `http://127.0.0.1:${port}`;
  // Its own signing key for ID tokens, made for this run.
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: randomBytes(6).toString('hex') };

  let provider: Provider | null = null;
  const makeProvider = () =>
    new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: redirectUris(),
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      pkce: { required: () => true },
      claims: { openid: ['sub', 'groups'], email: ['email', 'email_verified'] },
      cookies: { keys: [randomBytes(32).toString('hex')] },
      jwks: { keys: [signingKey] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      // The ID token gets the claims only where claims() hands them over (see claimsInIdToken).
      conformIdTokenClaims: false,
      findAccount: async (_ctx: unknown, sub: string) => {
        const identity = identities.get(sub);
        if (identity === undefined) return undefined;
        const { claimsInIdToken = false, email_verified = true, ...rest } = identity;
        const claims = { groups: [], ...rest, ...(email_verified === null ? {} : { email_verified }) };
        return { accountId: sub, claims: async (use: string) => (use === 'id_token' && !claimsInIdToken ? { sub } : claims) };
      },
      // The gateway is a first-party client: no consent screen.
      loadExistingGrant: async (ctx: KoaContextWithOidc) => {
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
    });

  handler = (req, res) => {
    provider ??= makeProvider();
    const p = provider;
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        try {
          await p.interactionDetails(req, res);
          if (refusal !== null) {
            const error = refusal;
            refusal = null;
            await p.interactionFinished(req, res, { error, error_description: 'refused by the test' }, { mergeWithLastSubmission: false });
            return;
          }
          if (next === null) throw new Error('signInAs was not called');
          identities.set(next.sub, next);
          await p.interactionFinished(req, res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
        } catch (err) {
          res.statusCode = 500;
          res.end((err as Error).message);
        }
      })();
      return;
    }
    p.callback()(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(identity) {
      next = identity;
    },
    refuseNext(error) {
      refusal = error;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

import * as client from 'openid-client';
import type { Logger } from 'pino';
import { Errors, GatewayError, type OidcConfig } from '@gateway/shared';

/**
 * Single sign-on through an OpenID provider: the authorization code flow with PKCE, `state` and
 * `nonce`, done by `openid-client` (discovery, the authorization URL, the code exchange and every
 * check of the ID token: signature, issuer, audience, expiry, nonce). This class only chooses the
 * parameters and reads the identity out of the answer; oidc-signins.ts turns it into a session.
 */
export interface OidcFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface OidcIdentity {
  /** The ID token's `iss` (openid-client checked it is the discovered issuer's). */
  issuer: string;
  /** The provider's `sub`: with `issuer`, what an account is bound to. */
  subject: string;
  email: string;
  /**
   * What the provider says of `email` in the same answer that carried it: true only for
   * `email_verified: true`; null when it says nothing (Entra ID, for one, never sends the claim).
   */
  emailVerified: boolean | null;
  /** The values of OIDC_GROUPS_CLAIM, from the ID token or, failing that, the userinfo answer. */
  groups: string[];
}

const SCOPES = 'openid email profile';

/** Why a sign-in was refused, said to the person in front of the browser. */
export class OidcRefusal extends GatewayError {}

export class OidcSignin {
  private configuration: Promise<client.Configuration> | null = null;

  constructor(
    readonly settings: OidcConfig,
    private readonly log: Logger,
  ) {}

  /** Where to send the browser, and what its callback must match. */
  async start(redirectUri: string): Promise<{ url: URL; flow: OidcFlow }> {
    const config = await this.discovered();
    const flow: OidcFlow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      redirectUri,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: SCOPES,
      code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url, flow };
  }

  /** Exchanges the code of the callback `query` and returns who signed in. */
  async finish(flow: OidcFlow, query: string): Promise<OidcIdentity> {
    const config = await this.discovered();
    const currentUrl = new URL(flow.redirectUri);
    currentUrl.search = query;
    let tokens;
    try {
      tokens = await client.authorizationCodeGrant(
        config,
        currentUrl,
        { pkceCodeVerifier: flow.codeVerifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true },
        { redirect_uri: flow.redirectUri },
      );
    } catch (err) {
      throw this.refusal(err);
    }
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw new OidcRefusal('UNAUTHORIZED', 'The identity provider sent no ID token.');
    let userinfo: Record<string, unknown> | null = null;
    // Many providers put email and groups in the userinfo answer only (the ID token keeps `sub`).
    const missing = idClaims.email === undefined || idClaims.email_verified === undefined || idClaims[this.settings.groupsClaim] === undefined;
    if (config.serverMetadata().userinfo_endpoint !== undefined && missing) {
      try {
        // The subject is checked against the ID token's: the answer is about the same person.
        userinfo = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      } catch (err) {
        this.log.warn({ err: { message: (err as Error).message } }, 'single sign-on: the userinfo request failed; using the ID token alone');
      }
    }
    const claims: Record<string, unknown> = { ...userinfo, ...idClaims };
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (email === '' || !email.includes('@')) {
      throw new OidcRefusal('FORBIDDEN', 'The identity provider did not share an email address; the gateway names accounts by email.');
    }
    return {
      issuer: idClaims.iss,
      subject: idClaims.sub,
      email,
      emailVerified: verification(email, [idClaims, userinfo]),
      groups: groupsOf(claims[this.settings.groupsClaim]),
    };
  }

  /** Whether the identity may sign in at all: its email domain is one of OIDC_ALLOWED_DOMAINS (when set). */
  domainAllowed(email: string): boolean {
    if (this.settings.allowedDomains.length === 0) return true;
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    return this.settings.allowedDomains.includes(domain);
  }

  /** The account role a new account gets: `admin` for a member of one of OIDC_ADMIN_GROUPS. */
  roleFor(identity: OidcIdentity): 'admin' | 'member' {
    return identity.groups.some((g) => this.settings.adminGroups.includes(g)) ? 'admin' : 'member';
  }

  /** Discovery once, on first use; a failed one is tried again at the next sign-in. */
  private discovered(): Promise<client.Configuration> {
    this.configuration ??= this.discover().catch((err: unknown) => {
      this.configuration = null;
      this.log.warn({ err: { message: (err as Error).message }, issuer: this.settings.issuer }, 'single sign-on: the identity provider cannot be reached');
      throw Errors.identityProviderUnreachable();
    });
    return this.configuration;
  }

  private async discover(): Promise<client.Configuration> {
    const issuer = new URL(this.settings.issuer);
    // Plain HTTP only to a provider on this machine (tests, a local lab): elsewhere the code and
    // tokens would cross the network in the clear.
    const options = isLoopback(issuer) && issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {};
    const found = await client.discovery(issuer, this.settings.clientId, undefined, this.clientAuth(undefined), options);
    const server = found.serverMetadata();
    const config = new client.Configuration(server, this.settings.clientId, undefined, this.clientAuth(server.token_endpoint_auth_methods_supported));
    if (options.execute !== undefined) client.allowInsecureRequests(config);
    return config;
  }

  /** client_secret_basic where the provider supports it (its default per the spec), else client_secret_post; no secret: a public client. */
  private clientAuth(supported: string[] | undefined): client.ClientAuth {
    const secret = this.settings.clientSecret;
    if (secret === undefined) return client.None();
    if (supported === undefined || supported.includes('client_secret_basic')) return client.ClientSecretBasic(secret);
    return client.ClientSecretPost(secret);
  }

  private refusal(err: unknown): GatewayError {
    if (err instanceof client.AuthorizationResponseError) {
      // The provider's own refusal (access_denied, …): its code, not its free text.
      return new OidcRefusal('UNAUTHORIZED', `The identity provider refused the sign-in (${err.error}).`);
    }
    this.log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'single sign-on: the callback was refused');
    return new OidcRefusal('UNAUTHORIZED', 'The answer of the identity provider could not be verified; start the sign-in again.');
  }
}

/**
 * `email_verified` of the first answer (the ID token, then userinfo) that carries this same email:
 * a verification speaks of the address it came with, not of one another answer sent. The string
 * forms are what AWS Cognito's and JumpCloud's userinfo answers send; nothing looser counts.
 */
function verification(email: string, answers: (Record<string, unknown> | null)[]): boolean | null {
  for (const answer of answers) {
    if (answer === null || typeof answer.email !== 'string' || answer.email.trim().toLowerCase() !== email.toLowerCase()) continue;
    const said = answer.email_verified;
    if (said === true || said === 'true') return true;
    if (said === false || said === 'false') return false;
  }
  return null;
}

function groupsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  if (typeof value === 'string') return value.split(/[,\s]+/).filter(Boolean);
  return [];
}

function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\./.test(url.hostname);
}

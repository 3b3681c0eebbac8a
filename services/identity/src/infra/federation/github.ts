/**
 * GitHub as an upstream (issue #40): plain OAuth 2.0, not OpenID Connect, on openid-client's
 * OAuth half (state and PKCE S256 checked by it). The identity is GitHub's numeric user id (a
 * login can be renamed and taken by someone else; the id cannot), under the issuer
 * `https://github.com`. An email is used only when `/user/emails` marks it `verified` (the primary
 * one first); the `email` of `/user` is never read, since GitHub does not say it was verified.
 */
import type { Configuration } from 'openid-client';
import type { IdentityProviderRecord } from '../../domain/identity-providers';
import { DEFAULT_SCOPES, type OpenIdClient, type PresetEndpoints, type UpstreamClient, isLoopback, refusalOf } from './upstream-client';
import { UpstreamRefusal } from './upstream-identity';

interface GithubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

/** The verified email to use: the primary one if verified, else the first verified one; none when none is verified. */
export function verifiedGithubEmail(emails: unknown): string | undefined {
  if (!Array.isArray(emails)) return undefined;
  const verified = (emails as GithubEmail[]).filter((e) => e.verified === true && typeof e.email === 'string' && e.email.includes('@'));
  const chosen = verified.find((e) => e.primary === true) ?? verified[0];
  return typeof chosen?.email === 'string' ? chosen.email.trim().toLowerCase() : undefined;
}

const splitName = (name: unknown): { givenName?: string; familyName?: string } => {
  if (typeof name !== 'string' || name.trim() === '') return {};
  const [first, ...rest] = name.trim().split(/\s+/);
  return { givenName: first, ...(rest.length > 0 ? { familyName: rest.join(' ') } : {}) };
};

export function githubConfiguration(oc: OpenIdClient, provider: IdentityProviderRecord, clientSecret: string | null, presets: PresetEndpoints): Configuration {
  const g = presets.github;
  const config = new oc.Configuration({ issuer: g.issuer, authorization_endpoint: g.authorizeUrl, token_endpoint: g.tokenUrl }, provider.clientId, clientSecret ?? undefined, clientSecret === null ? oc.None() : oc.ClientSecretPost(clientSecret));
  if (isLoopback(g.tokenUrl)) oc.allowInsecureRequests(config);
  config.timeout = 10;
  return config;
}

export function githubUpstream(oc: OpenIdClient, config: Configuration, provider: IdentityProviderRecord, presets: PresetEndpoints): UpstreamClient {
  const scopes = provider.scopes.length > 0 ? provider.scopes : DEFAULT_SCOPES.github;
  const api = presets.github.apiUrl.replace(/\/$/, '');
  const headers = () => new Headers({ accept: 'application/vnd.github+json', 'user-agent': 'iam-platform', 'x-github-api-version': '2022-11-28' });

  async function getJson(accessToken: string, path: string): Promise<unknown> {
    const res = await oc.fetchProtectedResource(config, accessToken, new URL(`${api}${path}`), 'GET', undefined, headers());
    if (!res.ok) throw new UpstreamRefusal('token');
    return res.json();
  }

  return {
    async start(redirectUri, statePrefix = '') {
      const codeVerifier = oc.randomPKCECodeVerifier();
      const state = `${statePrefix}${oc.randomState()}`;
      const url = oc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: scopes.join(' '),
        code_challenge: await oc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        allow_signup: 'false',
      });
      // No ID token, so no nonce: state and the PKCE verifier bind the callback.
      return { url, state, nonce: '', codeVerifier };
    },

    async finish(callbackUrl, checks, redirectUri) {
      try {
        const tokens = await oc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, idTokenExpected: false }, { redirect_uri: redirectUri });
        const user = (await getJson(tokens.access_token, '/user')) as { id?: unknown; name?: unknown };
        if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new UpstreamRefusal('no-subject');
        const email = verifiedGithubEmail(await getJson(tokens.access_token, '/user/emails'));
        return {
          issuer: presets.github.issuer,
          subject: String(user.id),
          ...(email ? { email } : {}),
          emailVerified: email !== undefined,
          ...splitName(user.name),
          amr: [],
        };
      } catch (err) {
        throw err instanceof UpstreamRefusal ? err : new UpstreamRefusal(refusalOf(err), err);
      }
    },
  };
}

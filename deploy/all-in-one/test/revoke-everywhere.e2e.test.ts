/**
 * `POST /api/v1/auth/revoke` ends every session of the account (issue #34 item 4), as "sign out
 * everywhere" does, so the owner is not left with tokens the sessions list no longer shows:
 * another device's REST access token and an API token of a provider session stop at the gateway
 * within the 1 s of DESIGN §5, and no session is left. The spec's row (the presented token and
 * every refresh token of the account) holds as before.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClient } from '@iam/identity';
import { StaticClientLookup } from '../../../services/identity/src/testing/static-client-lookup';
import { eventually } from '@iam/platform/testing';
import type * as openidClient from 'openid-client';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { freePort } from './support/nats';
import { signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

const REDIRECT = 'http://127.0.0.1:21999/callback';
const SECRET = randomBytes(24).toString('base64url');
const now = new Date();
/** A first-party app (no consent page), code + refresh. */
const APP: OAuthClient = {
  clientId: 'rp-revoke',
  name: 'Revoke app',
  type: 'confidential',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: [REDIRECT],
  postLogoutRedirectUris: [],
  roles: [],
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  requirePar: false,
  dpopBound: false,
  firstParty: true,
  builtIn: false,
  createdAt: now,
  updatedAt: now,
};

describe('POST /api/v1/auth/revoke ends every session of the account', () => {
  let sys: TestSystem;
  let oc: typeof openidClient;
  let issuer: string;
  let admin: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer }, identityClients: new StaticClientLookup([{ client: APP, secret: SECRET }]) });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const status = async (token: string) => (await fetch(`${issuer}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** An API token of a provider session of the user (code + PKCE through the hosted sign-in, then a refresh for the API). */
  async function providerApiToken(email: string, password: string): Promise<string> {
    const config = await oc.discovery(new URL(issuer), APP.clientId, { client_secret: SECRET }, oc.ClientSecretBasic(SECRET), { execute: [oc.allowInsecureRequests] });
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    const back = await signInOverHttp(url, { email, password });
    const code = await oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state });
    return (await oc.refreshTokenGrant(config, code.refresh_token!, { resource: `${issuer}/api` })).access_token;
  }

  it("two REST logins and a provider sign-in; revoke with one: the other device's token and the provider session's API token stop within 1 s, no session is left", async () => {
    const email = uniqueEmail('revoke');
    const password = strongPassword();
    const created = await http(issuer, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'Rev', lastName: 'Oke', email, password } });
    expect(created.status).toBe(201);
    const login = async () => (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } })).json as { token: string; refreshToken: string };
    const here = await login();
    const there = await login();
    const provider = await providerApiToken(email, password);
    expect([await status(here.token), await status(there.token), await status(provider)]).toEqual([200, 200, 200]);
    const listed = await http(issuer, 'GET', `/api/v1/users/${created.json.id}/sessions`, { token: admin });
    expect(listed.json.items).toHaveLength(3);

    expect((await http(issuer, 'POST', '/api/v1/auth/revoke', { token: here.token })).status).toBe(204);
    // The presented token at once (this gateway), the others through the revocation events (every gateway within a second).
    expect(await status(here.token)).toBe(401);
    await eventually(async () => (await status(there.token)) === 401 && (await status(provider)) === 401, 1_000, 25);
    // The refresh tokens of the account end too (the spec's row), and the owner sees no session left.
    expect((await http(issuer, 'POST', '/api/v1/auth/refresh', { body: { refreshToken: there.refreshToken } })).status).toBe(401);
    const after = await http(issuer, 'GET', `/api/v1/users/${created.json.id}/sessions`, { token: admin });
    expect(after.json.items).toEqual([]);
  });
});

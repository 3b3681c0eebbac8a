/**
 * The grants users gave a client are part of its power (issue #34 item 1, DESIGN §5 decision in
 * services/identity/README.md "OAuth clients"). The attack: an Administrator consents to a
 * third-party app; a user holding only `clients.manage` re-points it (a redirect URI added and made
 * public, or its secret rotated) and sends the Administrator a link; single sign-on and the
 * remembered consent would hand the code to the attacker with no page shown (`prompt=none`).
 * Such a change now ends every grant of the client in its own transaction: `prompt=none` answers
 * `consent_required`, the old refresh token is `invalid_grant`, the API tokens the users hold
 * through it stop at the gateway, and the audit trail says so. A change that lets no new party
 * receive codes (a rename, a redirect URI removed) keeps the grants.
 */
import { randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem, userHolding } from './harness';
import { CookieJar, freePort, oauthError, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;

const APP = 'http://127.0.0.1:21999/callback';
const SECOND = 'http://127.0.0.1:21999/second';
const ATTACKER = 'http://127.0.0.1:21999/attacker';

describe('changing a client that users consented to (clients.manage cannot re-point their grants)', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;
  /** A user holding clients.manage and nothing else. */
  let manager: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = Number(process.env.OIDC_REPOINT_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    manager = (await userHolding(issuer, admin, ['clients.manage'])).token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  const options = () => ({ execute: [oc.allowInsecureRequests] });
  const confidential = (clientId: string, secret: string) => oc.discovery(new URL(issuer), clientId, { client_secret: secret }, oc.ClientSecretBasic(secret), options());
  const publicClient = (clientId: string) => oc.discovery(new URL(issuer), clientId, undefined, oc.None(), options());

  async function authorization(config: Config, redirect: string, prompt: string, scope: string) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: redirect, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt });
    return { url, verifier, state };
  }

  /**
   * A role-less code client the Administrator signed in to and consented to (the user agent's
   * provider session in `jar`), its refresh token and an API token of the Administrator through it.
   */
  async function consentedApp(redirectUris: string[] = [APP]) {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `Reports ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris, postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token'] },
    });
    expect(r.status).toBe(201);
    const clientId = r.json.clientId as string;
    const config = await confidential(clientId, r.json.clientSecret as string);
    const jar = new CookieJar();
    const a = await authorization(config, APP, 'consent', 'openid offline_access');
    const back = await signInOverHttp(a.url, { jar });
    const code = await oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: a.verifier, expectedState: a.state });
    const api = await oc.refreshTokenGrant(config, code.refresh_token!, { resource: `${issuer}/api` });
    expect(api.refresh_token).toBeDefined();
    expect(await meStatus(api.access_token)).toBe(200);
    // Single sign-on and the remembered consent: the link goes through with no page.
    expect((await silently(config, APP, jar)).searchParams.get('code')).toEqual(expect.any(String));
    return { clientId, config, jar, refreshToken: api.refresh_token!, accessToken: api.access_token };
  }

  /** The Administrator's user agent follows a `prompt=none` link: where the provider sends it back to. */
  async function silently(config: Config, redirect: string, jar: CookieJar): Promise<URL> {
    const a = await authorization(config, redirect, 'none', 'openid');
    return (await signInOverHttp(a.url, { jar, signIn: false })).url;
  }

  const meStatus = async (token: string) => (await fetch(`${issuer}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** The client's change in the audit trail, once recorded. */
  const audited = (clientId: string, action: string) =>
    eventually(async () => {
      const r = await http(issuer, 'GET', `/api/v1/audit-events?targetId=${clientId}&action=${action}`, { token: admin });
      return r.json.items[0] as { actor: { id: string }; changes: Array<{ field: string; before?: unknown; after?: unknown }> } | undefined;
    }, 10_000, 100);

  it('a redirect URI added and the client made public: no code for the attacker, the old refresh token and API token end', async () => {
    const app = await consentedApp();
    const put = await http(issuer, 'PUT', `/api/v1/clients/${app.clientId}`, { token: manager, body: { redirectUris: [APP, ATTACKER], type: 'public' } });
    expect(put.status).toBe(200);
    // The attacker's link, as the public client with its own PKCE: the consent is gone.
    const attacker = await publicClient(app.clientId);
    const back = await silently(attacker, ATTACKER, app.jar);
    expect({ code: back.searchParams.get('code'), error: back.searchParams.get('error') }).toEqual({ code: null, error: 'consent_required' });
    expect(await oauthError(oc.refreshTokenGrant(attacker, app.refreshToken))).toBe('invalid_grant');
    await eventually(async () => (await meStatus(app.accessToken)) === 401, 5_000, 100);
    const change = await audited(app.clientId, 'client.updated');
    expect(change.changes).toEqual(expect.arrayContaining([{ field: 'grantsRevoked', after: 1 }]));
  });

  it('the secret rotated: the consent and the old refresh token end', async () => {
    const app = await consentedApp();
    const rotated = await http(issuer, 'POST', `/api/v1/clients/${app.clientId}/secret`, { token: manager });
    expect(rotated.status).toBe(200);
    const config = await confidential(app.clientId, rotated.json.clientSecret as string);
    const back = await silently(config, APP, app.jar);
    expect({ code: back.searchParams.get('code'), error: back.searchParams.get('error') }).toEqual({ code: null, error: 'consent_required' });
    expect(await oauthError(oc.refreshTokenGrant(config, app.refreshToken))).toBe('invalid_grant');
    await eventually(async () => (await meStatus(app.accessToken)) === 401, 5_000, 100);
    expect((await audited(app.clientId, 'client.secret.rotated')).changes).toEqual([{ field: 'clientSecret', redacted: true }, { field: 'grantsRevoked', after: 1 }]);
    // The user consents again (the page is shown) and the app works again.
    const again = await authorization(config, APP, 'consent', 'openid offline_access');
    const page = await signInOverHttp(again.url, { jar: app.jar });
    const tokens = await oc.authorizationCodeGrant(config, page.url, { pkceCodeVerifier: again.verifier, expectedState: again.state });
    expect(tokens.refresh_token).toBeDefined();
  });

  it('a rename and a redirect URI removed keep the grants: the link still goes through, the refresh token still works', async () => {
    const app = await consentedApp([APP, SECOND]);
    const put = await http(issuer, 'PUT', `/api/v1/clients/${app.clientId}`, { token: manager, body: { name: 'Reports (renamed)', redirectUris: [APP] } });
    expect(put.status).toBe(200);
    expect((await silently(app.config, APP, app.jar)).searchParams.get('code')).toEqual(expect.any(String));
    const refreshed = await oc.refreshTokenGrant(app.config, app.refreshToken, { resource: `${issuer}/api` });
    expect(await meStatus(refreshed.access_token)).toBe(200);
    expect(await meStatus(app.accessToken)).toBe(200);
    const change = await audited(app.clientId, 'client.updated');
    expect(change.changes.map((c) => c.field)).toEqual(['name', 'redirectUris']);
  });
});

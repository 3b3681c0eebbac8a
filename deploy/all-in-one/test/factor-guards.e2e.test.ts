/**
 * Who may add a second factor, and who reads an Administrator's sessions (issue #34 items 2 and
 * 7), end to end through the gateway:
 * - adding a factor (TOTP start and activation, passkey options and registration) needs a sign-in
 *   within 5 minutes, as removing one does: a token whose sign-in is older gets 403
 *   reauthentication-required and adds nothing;
 * - the account's security (factors, sessions, password, email, signing out everywhere) is for
 *   first-party tokens: a user's token that an OAuth third-party client holds (a registry client,
 *   code + PKCE through the hosted pages) gets 403 first-party-required; the console's own client
 *   (`iam-console`) and a REST login's token go through;
 * - a users.manage holder is refused an Administrator's sessions and security state (403, like
 *   the DELETE); an Administrator reads them.
 */
import { randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { SoftAuthenticator } from '../../../services/identity/src/testing/soft-authenticator';
import { ADMIN, type HttpResult, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { claimsOf, totp } from './support/factors';
import { signInOverHttp } from './support/oidc-rp';
import { freePort } from '@iam/platform/testing';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
const REDIRECT = 'http://127.0.0.1:21999/callback';


describe('adding a factor needs a recent first-party sign-in; an Administrator\'s sessions are for Administrators (end to end)', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(issuer, method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function newUser(roles: string[] = []) {
    const email = uniqueEmail('guard');
    const password = strongPassword();
    const r = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Ada', lastName: 'Guard', email, password, roles } });
    expect(r.status).toBe(201);
    return { id: r.json.id as string, email, password, token: (await login(email, password)).json.token as string };
  }

  /** A token of `u` whose sign-in was 6 minutes ago (its session moved back, then refreshed: the refresh keeps auth_time). */
  async function staleToken(u: { email: string; password: string }): Promise<string> {
    const l = await login(u.email, u.password);
    await sys.identity.dataSource.query(`UPDATE sessions SET auth_time = now() - interval '6 minutes' WHERE id = $1`, [claimsOf(l.json.token).sid]);
    const r = await call('POST', '/api/v1/auth/refresh', { body: { refreshToken: l.json.refreshToken } });
    expect(r.status).toBe(200);
    expect(Date.now() / 1000 - (claimsOf(r.json.token).auth_time as number)).toBeGreaterThan(300);
    return r.json.token as string;
  }

  /** The user's API token through a client: code + PKCE on the hosted pages (consent allowed), `resource` the API. */
  async function clientToken(u: { email: string; password: string }, client: { clientId: string; clientSecret?: string; redirect: string }): Promise<string> {
    const config = await oc.discovery(
      new URL(issuer),
      client.clientId,
      client.clientSecret ? { client_secret: client.clientSecret } : undefined,
      client.clientSecret ? oc.ClientSecretBasic(client.clientSecret) : oc.None(),
      { execute: [oc.allowInsecureRequests] },
    );
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const resource = `${issuer}/api`;
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: client.redirect, scope: 'openid', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource });
    const back = await signInOverHttp(url, { email: u.email, password: u.password, rpOrigin: client.redirect });
    const t = await oc.authorizationCodeGrant(config, back.url, { pkceCodeVerifier: verifier, expectedState: state }, { resource });
    expect(claimsOf(t.access_token)).toMatchObject({ client_id: client.clientId, aud: 'iam-api' });
    return t.access_token;
  }

  const expectRefused = (r: HttpResult, type: string) => {
    expect({ status: r.status, type: r.json?.type, contentType: r.headers.get('content-type') }).toEqual({ status: 403, type, contentType: 'application/problem+json' });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  };

  /**
   * The four routes that add a factor, called with `token`. Where a first step is refused, the
   * next one is tried with what a fresh token of the user starts (its pending secret, its options).
   */
  async function addRoutes(u: { token: string }, token: string): Promise<Record<string, HttpResult>> {
    const start = await call('POST', '/api/v1/me/mfa/totp', { token });
    const secret = (start.status === 200 ? start : await call('POST', '/api/v1/me/mfa/totp', { token: u.token })).json.secret as string;
    const activate = await call('POST', '/api/v1/me/mfa/totp/activate', { token, body: { code: totp(secret) } });
    const options = await call('POST', '/api/v1/me/passkeys/options', { token });
    const made = options.status === 200 ? options : await call('POST', '/api/v1/me/passkeys/options', { token: u.token });
    const response = new SoftAuthenticator(issuer).create(made.json as never);
    return {
      'POST /api/v1/me/mfa/totp': start,
      'POST /api/v1/me/mfa/totp/activate': activate,
      'POST /api/v1/me/passkeys/options': options,
      'POST /api/v1/me/passkeys': await call('POST', '/api/v1/me/passkeys', { token, body: { name: 'Planted', response } }),
    };
  }

  it('a token whose sign-in is over 5 minutes old adds no factor: 403 reauthentication-required on each add route, nothing added', async () => {
    const u = await newUser();
    const stale = await staleToken(u);
    for (const [route, r] of Object.entries(await addRoutes(u, stale))) {
      expect([route, r.status]).toEqual([route, 403]);
      expectRefused(r, 'urn:iam:problem:reauthentication-required');
    }
    expect((await call('GET', '/api/v1/me/mfa', { token: u.token })).json).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
    // A fresh sign-in adds them.
    const again = await addRoutes(u, u.token);
    expect(Object.values(again).map((r) => r.status)).toEqual([200, 204, 200, 201]);
  });

  it("a user's token held by a third-party OAuth client changes nothing of the account's security: 403 first-party-required", async () => {
    const c = await call('POST', '/api/v1/clients', {
      token: admin,
      body: { name: `Third ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [REDIRECT], postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token'] },
    });
    expect(c.status).toBe(201);
    const u = await newUser();
    const third = await clientToken(u, { clientId: c.json.clientId as string, clientSecret: c.json.clientSecret as string, redirect: REDIRECT });
    expect(claimsOf(third).auth_time).toEqual(expect.any(Number));
    // A fresh sign-in, yet another's hands: every add route refuses it.
    for (const [route, r] of Object.entries(await addRoutes(u, third))) {
      expect([route, r.status]).toEqual([route, 403]);
      expectRefused(r, 'urn:iam:problem:first-party-required');
    }
    // And the rest of the account's security: factors read or removed, sessions, password, email, signing out everywhere.
    const sid = claimsOf(u.token).sid as string;
    for (const [method, path, body] of [
      ['GET', '/api/v1/me/mfa'],
      ['GET', '/api/v1/me/passkeys'],
      ['DELETE', '/api/v1/me/mfa/totp'],
      ['POST', '/api/v1/me/mfa/recovery-codes'],
      ['GET', '/api/v1/me/sessions'],
      ['DELETE', `/api/v1/me/sessions/${sid}`],
      ['DELETE', '/api/v1/me/sessions'],
      ['POST', '/api/v1/me/password', { currentPassword: u.password, newPassword: strongPassword() }],
      ['POST', '/api/v1/me/email', { currentPassword: u.password, email: uniqueEmail('moved') }],
      ['POST', '/api/v1/me/sign-out-everywhere'],
    ] as const) {
      const r = await call(method, path, { token: third, body });
      expect([method, path, r.status]).toEqual([method, path, 403]);
      expectRefused(r, 'urn:iam:problem:first-party-required');
    }
    // Nothing changed: the password, the email and the REST session stand; no factor was added.
    expect((await login(u.email, u.password)).status).toBe(200);
    expect((await call('GET', '/api/v1/me/sessions', { token: u.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/me/mfa', { token: u.token })).json).toEqual({ totp: false, passkeys: 0, recoveryCodesLeft: 0 });
    // The profile is not security: the app may still read it.
    expect((await call('GET', '/api/v1/me', { token: third })).status).toBe(200);
  });

  it("the console's own client (iam-console, first party) and a REST login's token add factors", async () => {
    const u = await newUser();
    const consoleToken = await clientToken(u, { clientId: 'iam-console', redirect: `${issuer}/console/` });
    const added = await addRoutes(u, consoleToken);
    expect(Object.values(added).map((r) => r.status)).toEqual([200, 204, 200, 201]);
    expect((await call('GET', '/api/v1/me/mfa', { token: consoleToken })).json).toMatchObject({ totp: true, passkeys: 1 });
    expect((await call('GET', '/api/v1/me/sessions', { token: consoleToken })).status).toBe(200);
  });

  it("a users.manage holder reads no Administrator's sessions or security state (403, as the DELETE); an Administrator does", async () => {
    const role = await call('POST', '/api/v1/roles', { token: admin, body: { name: `Helpdesk-${randomUUID().slice(0, 8)}`, description: 'users.manage only' } });
    expect(role.status).toBe(201);
    const perm = (await call('GET', '/api/v1/permissions?q=users.manage&pageSize=100', { token: admin })).json.items.find((p: { name: string }) => p.name === 'users.manage');
    expect((await call('POST', '/api/v1/role-permissions', { token: admin, body: { roleId: role.json.id, permissionId: perm.id } })).status).toBe(201);
    const helpdesk = await newUser([role.json.name as string]);
    const otherAdmin = await newUser(['Administrator']);
    const plain = await newUser();

    for (const path of [`/api/v1/users/${otherAdmin.id}/sessions`, `/api/v1/users/${otherAdmin.id}/security`]) {
      const r = await call('GET', path, { token: helpdesk.token });
      expect([path, r.status]).toEqual([path, 403]);
      expect(r.json.type).toBe('urn:iam:problem:forbidden');
      expect(r.text).not.toContain(claimsOf(otherAdmin.token).sid as string);
    }
    expect((await call('DELETE', `/api/v1/users/${otherAdmin.id}/sessions`, { token: helpdesk.token })).status).toBe(403);
    // An Administrator reads them.
    const sessions = await call('GET', `/api/v1/users/${otherAdmin.id}/sessions`, { token: admin });
    expect(sessions.status).toBe(200);
    expect(sessions.json.items.map((s: { id: string }) => s.id)).toContain(claimsOf(otherAdmin.token).sid);
    expect((await call('GET', `/api/v1/users/${otherAdmin.id}/security`, { token: admin })).json).toMatchObject({ locked: false, mfa: { totp: false } });
    // users.manage still reads everyone else's.
    expect((await call('GET', `/api/v1/users/${plain.id}/sessions`, { token: helpdesk.token })).status).toBe(200);
    expect((await call('GET', `/api/v1/users/${plain.id}/security`, { token: helpdesk.token })).status).toBe(200);
  });
});

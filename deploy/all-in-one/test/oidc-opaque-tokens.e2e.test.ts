/**
 * A token from a standard code exchange works at the API (issue #36 item 4): an app configured
 * with discovery, a client id and a secret alone (openid-client; no `resource`) gets the library's
 * opaque access token, which userinfo takes and the gateway now accepts too, by asking identity:
 * - its rights are those an API JWT of the same grant carries: a third-party client's consented
 *   API scopes within its ceiling, no roles;
 * - it stops within a second when its session ends or it is revoked; a garbage or unknown one is
 *   401 (with the resource-metadata challenge);
 * - a DPoP-bound one needs its proof, as a bound JWT does.
 * The gateway's cache of identity's answers (bounded in time and size) is unit-tested in
 * gateway/src/auth/opaque-tokens.test.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { freePort, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;
const REDIRECT = 'http://127.0.0.1:21999/callback';

describe('the provider’s opaque access tokens at the API', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;
  let config: Config;
  let secret: string;
  let clientId: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = Number(process.env.OIDC_OPAQUE_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    // A third-party app whose users may delegate users.manage and audit.read to it.
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `App ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token'], apiPermissions: ['users.manage', 'audit.read'] },
    });
    expect(r.status).toBe(201);
    clientId = r.json.clientId as string;
    secret = r.json.clientSecret as string;
    // Configured as a standard app is: discovery, a client id and a secret.
    config = await oc.discovery(new URL(issuer), clientId, secret, undefined, { execute: [oc.allowInsecureRequests] });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  /** The standard code exchange (no `resource`), as the Administrator. */
  async function signIn(scope: string, c: Config = config, dpop?: openidClient.DPoPHandle) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(c, { redirect_uri: REDIRECT, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent' });
    return oc.authorizationCodeGrant(c, (await signInOverHttp(url)).url, { pkceCodeVerifier: verifier, expectedState: state }, undefined, dpop ? { DPoP: dpop } : undefined);
  }

  /** Whether identity denylisted the token (by the SHA-256 of its value: every gateway refuses it at once, cached or not). */
  const denylisted = async (token: string) =>
    (await sys.identity.dataSource.query<unknown[]>('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [createHash('sha256').update(token).digest('base64url')])).length === 1;
  const call = (path: string, token: string) => fetch(`${issuer}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const statusAt = async (path: string, token: string) => (await call(path, token)).status;

  it('works at /api/v1/me and at userinfo, with exactly the consented API permissions (no roles)', async () => {
    const t = await signIn('openid email profile users.manage');
    // The library's opaque token (no audience: the only kind userinfo takes).
    expect(t.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const sub = t.claims()!.sub;
    expect(await oc.fetchUserInfo(config, t.access_token, sub)).toMatchObject({ sub, email: ADMIN.email });
    const me = await call('/api/v1/me', t.access_token);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { email: string }).email).toBe(ADMIN.email);
    // users.manage was consented; audit.read is in the ceiling but was not asked; the
    // Administrator role never travels through a third-party app.
    expect(await statusAt('/api/v1/users?pageSize=1', t.access_token)).toBe(200);
    expect(await statusAt('/api/v1/audit-events?pageSize=1', t.access_token)).toBe(403);
    expect(await statusAt('/api/v1/clients?pageSize=1', t.access_token)).toBe(403);
    // The identity calls the gateway makes with it take it too; the account's security (here its
    // sessions) is for first-party tokens only (issue #34 item 2), as for a third-party JWT.
    expect((await call('/api/v1/me/sessions', t.access_token)).status).toBe(403);
  });

  it('the first-party console’s opaque token keeps the user’s rights (roles included), as its API JWT does', async () => {
    const consoleApp = await oc.discovery(new URL(issuer), 'iam-console', undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const redirect = `${issuer}/console/`;
    const url = oc.buildAuthorizationUrl(consoleApp, { redirect_uri: redirect, scope: 'openid email', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    const t = await oc.authorizationCodeGrant(consoleApp, (await signInOverHttp(url, { rpOrigin: redirect })).url, { pkceCodeVerifier: verifier, expectedState: state });
    expect(t.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await statusAt('/api/v1/clients?pageSize=1', t.access_token)).toBe(200);
    expect(await statusAt('/api/v1/audit-events?pageSize=1', t.access_token)).toBe(200);
  });

  it('without an API scope asked: /me only, 403 elsewhere', async () => {
    const t = await signIn('openid email');
    expect(await statusAt('/api/v1/me', t.access_token)).toBe(200);
    expect(await statusAt('/api/v1/users?pageSize=1', t.access_token)).toBe(403);
  });

  it('its session ended: 401 within a second (and at userinfo)', async () => {
    const t = await signIn('openid email users.manage');
    expect(await statusAt('/api/v1/users?pageSize=1', t.access_token)).toBe(200);
    // The sign-in's session: the newest of the administrator's (the administrator's sessions API).
    const sub = JSON.parse(Buffer.from(admin.split('.')[1]!, 'base64url').toString('utf8')).sub as string;
    const sessions = (await http(issuer, 'GET', `/api/v1/users/${sub}/sessions`, { token: admin })).json as { items: Array<{ id: string; createdAt: string }> };
    const newest = [...sessions.items].sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0]!;
    expect(await denylisted(t.access_token)).toBe(false);
    expect((await http(issuer, 'DELETE', `/api/v1/me/sessions/${newest.id}`, { token: admin })).status).toBe(204);
    expect(await denylisted(t.access_token)).toBe(true);
    await eventually(async () => (await statusAt('/api/v1/users?pageSize=1', t.access_token)) === 401, 5_000, 100);
    expect(await statusAt('/api/v1/me', t.access_token)).toBe(401);
    // The provider ended the session's grants with it: userinfo refuses the token too.
    expect(await statusAt('/oidc/me', t.access_token)).toBe(401);
  });

  it('revoked by its client (RFC 7009): 401 within a second', async () => {
    const t = await signIn('openid users.manage');
    expect(await statusAt('/api/v1/users?pageSize=1', t.access_token)).toBe(200);
    await oc.tokenRevocation(config, t.access_token);
    expect(await denylisted(t.access_token)).toBe(true);
    await eventually(async () => (await statusAt('/api/v1/users?pageSize=1', t.access_token)) === 401, 5_000, 100);
  });

  it('a garbage or unknown opaque token: 401 with the Bearer challenge', async () => {
    for (const token of ['x'.repeat(43), randomUUID().replace(/-/g, '').padEnd(43, 'A'), 'garbage']) {
      const res = await call('/api/v1/me', token);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", resource_metadata="${issuer}/.well-known/oauth-protected-resource/api"`);
    }
  });

  it('a DPoP-bound opaque token needs its proof: refused as Bearer, accepted with a proof of its key', async () => {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `SPA ${randomUUID().slice(0, 8)}`, type: 'public', redirectUris: [REDIRECT], grantTypes: ['authorization_code'], dpopBound: true, apiPermissions: ['users.manage'] },
    });
    expect(r.status).toBe(201);
    const spa = await oc.discovery(new URL(issuer), r.json.clientId as string, undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
    const key = await oc.randomDPoPKeyPair('ES256');
    const t = await signIn('openid users.manage', spa, oc.getDPoPHandle(spa, key));
    expect(t.token_type.toLowerCase()).toBe('dpop');
    expect(t.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await statusAt('/api/v1/me', t.access_token)).toBe(401);
    const res = await oc.fetchProtectedResource(spa, t.access_token, new URL(`${issuer}/api/v1/users?pageSize=1`), 'GET', undefined, undefined, { DPoP: oc.getDPoPHandle(spa, key) });
    expect(res.status).toBe(200);
    // A proof of another key: 401 with the DPoP challenge.
    const stolen = oc.fetchProtectedResource(spa, t.access_token, new URL(`${issuer}/api/v1/me`), 'GET', undefined, undefined, { DPoP: oc.getDPoPHandle(spa, await oc.randomDPoPKeyPair('ES256')) });
    await expect(stolen).rejects.toMatchObject({ status: 401, cause: [expect.objectContaining({ scheme: 'dpop', parameters: expect.objectContaining({ error: 'invalid_token' }) })] });
  });
});

/**
 * The OpenID provider with clients made through the clients API (`/api/v1/clients`, the real
 * registry in identity's database), openid-client as the relying party, through the gateway:
 * - a deleted client: its grants, codes and refresh tokens end in the delete's own transaction,
 *   its refresh token and client_credentials stop (invalid_client), its service-account token and
 *   the users' tokens issued to it stop at the gateway;
 * - DPoP (RFC 9449): a `dpopBound` client gets tokens bound to its key (`cnf.jkt`), and the gateway
 *   accepts them only as `DPoP` with a fresh proof of that key (openid-client makes the proofs);
 * - client_credentials with only the client's id and secret yields an API token (the default
 *   resource) that the gateway accepts.
 */
import { createHash, randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK } from 'jose';
import type * as openidClient from 'openid-client';
import { eventually, freePort } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type KeyPair = Awaited<ReturnType<OpenIdClient['randomDPoPKeyPair']>>;
const REDIRECT = 'http://127.0.0.1:21999/callback';


/** The OAuth error code of a refused call (a body error, or a WWW-Authenticate challenge for client authentication). */
async function oauthError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const e = err as { error?: string; cause?: Array<{ parameters?: { error?: string } }> | { error?: string } };
    if (e.error) return e.error;
    if (Array.isArray(e.cause)) return e.cause[0]?.parameters?.error;
    return e.cause?.error;
  }
}

const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('OpenID provider with registry clients (clients API, DPoP at the gateway, deletion)', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    // OIDC_REGISTRY_E2E_PORT: a fixed port where the machine asks for one (the issuer must be known before start).
    const port = Number(process.env.OIDC_REGISTRY_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function createClient(body: Record<string, unknown>): Promise<{ clientId: string; clientSecret: string }> {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `RP ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [], postLogoutRedirectUris: [], grantTypes: ['client_credentials'], ...body },
    });
    expect(r.status).toBe(201);
    return { clientId: r.json.clientId, clientSecret: r.json.clientSecret };
  }

  const discover = (c: { clientId: string; clientSecret: string }) =>
    oc.discovery(new URL(issuer), c.clientId, { client_secret: c.clientSecret }, oc.ClientSecretBasic(c.clientSecret), { execute: [oc.allowInsecureRequests] });

  const rowsOf = async (clientId: string) =>
    (await sys.identity.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM oidc_payloads WHERE payload->>'clientId' = $1`, [clientId]))[0]!.n;

  it('client_credentials with only the id and secret: an API token (default resource) the gateway accepts', async () => {
    const svc = await createClient({ roles: ['Administrator'] });
    const t = await oc.clientCredentialsGrant(await discover(svc));
    expect(t.token_type.toLowerCase()).toBe('bearer');
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ iss: issuer, aud: 'iam-api', sub: svc.clientId, client_id: svc.clientId, roles: ['Administrator'] }));
    const users = await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(users.status).toBe(200);
  });

  /**
   * The signed-in user's API token through a client (code + PKCE, then a refresh for the API
   * resource), delegating users.manage (the clients here list it in their apiPermissions).
   */
  async function userApiToken(config: Awaited<ReturnType<typeof discover>>) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access users.manage',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    const code = await oc.authorizationCodeGrant(config, (await signInOverHttp(url)).url, { pkceCodeVerifier: verifier, expectedState: state });
    return oc.refreshTokenGrant(config, code.refresh_token!, { resource: `${issuer}/api` });
  }

  const statusWith = async (token: string) => (await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${token}` } })).status;
  /** Refused (401) within 5 s: revocations reach the gateway within a second. */
  const refusedSoon = (token: string) => eventually(async () => (await statusWith(token)) === 401, 5_000, 100);

  it("a client's powers cut (fewer roles): its service token stops, its users' tokens do not", async () => {
    const app = await createClient({ redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], roles: ['Administrator'], apiPermissions: ['users.manage'] });
    const config = await discover(app);
    const t = await userApiToken(config);
    const svc = await oc.clientCredentialsGrant(config);
    expect([await statusWith(t.access_token), await statusWith(svc.access_token)]).toEqual([200, 200]);
    expect((await http(issuer, 'PUT', `/api/v1/clients/${app.clientId}`, { token: admin, body: { roles: [] } })).status).toBe(200);
    await refusedSoon(svc.access_token);
    expect(await statusWith(t.access_token)).toBe(200);
  });

  it('deleting a client ends its grants with the delete: its refresh token and client_credentials stop, its service token too', async () => {
    const doomed = await createClient({ redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], roles: ['Administrator'], apiPermissions: ['users.manage'] });
    const config = await discover(doomed);
    // The same user through another client.
    const other = await createClient({ redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token'], apiPermissions: ['users.manage'] });
    const elsewhere = await userApiToken(await discover(other));
    // The user's API token through this client (RFC 9068, client_id = the client), and the rotated grant.
    const t = await userApiToken(config);
    expect(t.refresh_token).toBeDefined();
    expect(payloadOf(t.access_token)).toEqual(expect.objectContaining({ sub: expect.any(String), client_id: doomed.clientId }));
    const svc = await oc.clientCredentialsGrant(config);
    expect(await statusWith(svc.access_token)).toBe(200);
    expect(await statusWith(t.access_token)).toBe(200);
    expect(await rowsOf(doomed.clientId)).toBeGreaterThan(0);
    // The audit trail: the consent, by the user, from the caller's address; the sign-in as REST logins record it.
    const consent = await eventually(async () => {
      const r = await http(issuer, 'GET', `/api/v1/audit-events?targetId=${doomed.clientId}&action=consent.`, { token: admin });
      return r.json.items[0] as { action: string; actor: { type: string; email?: string }; changes: unknown[]; clientIp?: string } | undefined;
    });
    expect(consent).toMatchObject({ action: 'consent.granted', actor: { type: 'user', email: ADMIN.email }, changes: [{ field: 'scopes', after: ['email', 'offline_access', 'openid', 'users.manage'] }], clientIp: '127.0.0.1' });
    const login = await http(issuer, 'GET', `/api/v1/audit-events?action=login.succeeded&pageSize=1`, { token: admin });
    expect(login.json.items[0]).toMatchObject({ action: 'login.succeeded', clientIp: '127.0.0.1' });

    const del = await http(issuer, 'DELETE', `/api/v1/clients/${doomed.clientId}`, { token: admin });
    expect(del.status).toBe(204);
    // Gone with the delete's commit, not later.
    expect(await rowsOf(doomed.clientId)).toBe(0);
    expect(await oauthError(oc.refreshTokenGrant(config, t.refresh_token!))).toBe('invalid_client');
    expect(await oauthError(oc.clientCredentialsGrant(config))).toBe('invalid_client');
    // Its service-account token (sub = client id) and the user's token issued to it (client_id) stop
    // at the gateway (the client's revocation, within a second).
    await refusedSoon(svc.access_token);
    await refusedSoon(t.access_token);
    // The same user's tokens through another client, and their REST token, are not touched.
    expect(payloadOf(elsewhere.access_token)).toEqual(expect.objectContaining({ sub: payloadOf(t.access_token).sub, client_id: other.clientId }));
    expect(await statusWith(elsewhere.access_token)).toBe(200);
    expect(await statusWith(admin)).toBe(200);
  });

  describe('DPoP', () => {
    let bound: { clientId: string; clientSecret: string };
    let config: Awaited<ReturnType<OpenIdClient['discovery']>>;
    let keyPair: KeyPair;
    let token: string;

    beforeAll(async () => {
      bound = await createClient({ roles: ['Administrator'], dpopBound: true });
      config = await discover(bound);
      keyPair = await oc.randomDPoPKeyPair('ES256');
      const t = await oc.clientCredentialsGrant(config, undefined, { DPoP: oc.getDPoPHandle(config, keyPair) });
      expect(t.token_type.toLowerCase()).toBe('dpop');
      token = t.access_token;
    });

    const thumbprint = async (k: KeyPair['publicKey']) => calculateJwkThumbprint(await exportJWK(k), 'sha256');

    it('a dpopBound client gets no token without a proof; with one, the token is bound to its key (cnf.jkt)', async () => {
      expect(await oauthError(oc.clientCredentialsGrant(config))).toBe('invalid_grant');
      expect(payloadOf(token).cnf).toEqual({ jkt: await thumbprint(keyPair.publicKey) });
    });

    it('the gateway accepts the bound token with a fresh proof of its key, on GET and POST routes', async () => {
      const res = await oc.fetchProtectedResource(config, token, new URL(`${issuer}/api/v1/users?pageSize=1`), 'GET', undefined, undefined, { DPoP: oc.getDPoPHandle(config, keyPair) });
      expect(res.status).toBe(200);
      const created = await oc.fetchProtectedResource(
        config,
        token,
        new URL(`${issuer}/api/v1/permissions`),
        'POST',
        JSON.stringify({ name: `dpop.${randomUUID().slice(0, 8)}`, description: 'made with a DPoP-bound token' }),
        new Headers({ 'content-type': 'application/json' }),
        { DPoP: oc.getDPoPHandle(config, keyPair) },
      );
      expect(created.status).toBe(201);
    });

    it('code + PKCE for a public dpopBound client: the exchange and refreshes need the proof; its API token works at the gateway only with proofs', async () => {
      const r = await http(issuer, 'POST', '/api/v1/clients', {
        token: admin,
        body: { name: `SPA ${randomUUID().slice(0, 8)}`, type: 'public', redirectUris: [REDIRECT], postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token'], dpopBound: true, apiPermissions: ['users.manage'] },
      });
      expect(r.status).toBe(201);
      const spa = await oc.discovery(new URL(issuer), r.json.clientId as string, undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
      const kp = await oc.randomDPoPKeyPair('ES256');
      const verifier = oc.randomPKCECodeVerifier();
      const state = oc.randomState();
      const url = oc.buildAuthorizationUrl(spa, {
        redirect_uri: REDIRECT,
        scope: 'openid email offline_access users.manage',
        code_challenge: await oc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        prompt: 'consent',
      });
      const end = await signInOverHttp(url);
      // Without a proof the code is not exchanged.
      expect(await oauthError(oc.authorizationCodeGrant(spa, end.url, { pkceCodeVerifier: verifier, expectedState: state }))).toBe('invalid_grant');
      const again = await signInOverHttp(url);
      const t = await oc.authorizationCodeGrant(spa, again.url, { pkceCodeVerifier: verifier, expectedState: state }, undefined, { DPoP: oc.getDPoPHandle(spa, kp) });
      expect(t.token_type.toLowerCase()).toBe('dpop');
      // The refresh token of a public client is bound too: another key cannot use it.
      expect(await oauthError(oc.refreshTokenGrant(spa, t.refresh_token!, { resource: `${issuer}/api` }, { DPoP: oc.getDPoPHandle(spa, await oc.randomDPoPKeyPair('ES256')) }))).toBe('invalid_grant');
      const api = await oc.refreshTokenGrant(spa, t.refresh_token!, { resource: `${issuer}/api` }, { DPoP: oc.getDPoPHandle(spa, kp) });
      expect(payloadOf(api.access_token)).toEqual(expect.objectContaining({ sub: t.claims()!.sub, cnf: { jkt: await thumbprint(kp.publicKey) } }));
      const users = await oc.fetchProtectedResource(spa, api.access_token, new URL(`${issuer}/api/v1/users?pageSize=1`), 'GET', undefined, undefined, { DPoP: oc.getDPoPHandle(spa, kp) });
      expect(users.status).toBe(200);
      expect((await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `Bearer ${api.access_token}` } })).status).toBe(401);
    });

    /** A DPoP proof of `kp` for one request (as openid-client makes them), to replay or misuse. */
    async function proofFor(kp: KeyPair, method: string, url: string, at = token): Promise<string> {
      const jwk = await exportJWK(kp.publicKey);
      return new SignJWT({ jti: randomUUID(), htm: method, htu: url, iat: Math.floor(Date.now() / 1000), ath: createHash('sha256').update(at).digest('base64url') })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(kp.privateKey);
    }

    const refused = async (headers: Record<string, string>, url = `${issuer}/api/v1/users`) => {
      const r = await fetch(url, { headers });
      const body = (await r.json()) as { status: number; traceId?: string };
      return { status: r.status, type: r.headers.get('content-type'), challenge: r.headers.get('www-authenticate'), body };
    };

    it('a bound token as Bearer, without a proof, with a proof of another key, a replayed proof or one for another URI: 401 problem+json, WWW-Authenticate: DPoP', async () => {
      const expectRefused = (r: Awaited<ReturnType<typeof refused>>, error: string) => {
        expect(r.status).toBe(401);
        expect(r.type).toMatch(/^application\/problem\+json/);
        expect(r.body.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(r.challenge).toMatch(new RegExp(`^DPoP error="${error}"`));
      };
      expectRefused(await refused({ authorization: `Bearer ${token}` }), 'invalid_token');
      expectRefused(await refused({ authorization: `DPoP ${token}` }), 'invalid_token');
      const other = await oc.randomDPoPKeyPair('ES256');
      expectRefused(await refused({ authorization: `DPoP ${token}`, dpop: await proofFor(other, 'GET', `${issuer}/api/v1/users`) }), 'invalid_token');
      const once = await proofFor(keyPair, 'GET', `${issuer}/api/v1/users`);
      expect((await fetch(`${issuer}/api/v1/users`, { headers: { authorization: `DPoP ${token}`, dpop: once } })).status).toBe(200);
      expectRefused(await refused({ authorization: `DPoP ${token}`, dpop: once }), 'invalid_dpop_proof');
      expectRefused(await refused({ authorization: `DPoP ${token}`, dpop: await proofFor(keyPair, 'GET', `${issuer}/api/v1/roles`) }), 'invalid_dpop_proof');
      expectRefused(await refused({ authorization: `DPoP ${token}`, dpop: await proofFor(keyPair, 'DELETE', `${issuer}/api/v1/users`) }), 'invalid_dpop_proof');
    });
  });
});

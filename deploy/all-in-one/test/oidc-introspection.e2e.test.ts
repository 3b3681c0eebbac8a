/**
 * Introspection (RFC 7662) and revocation (RFC 7009) of every token the provider issues (issue #36
 * item 3), the API's JWT access tokens included, which the library alone refuses
 * (`unsupported_token_type`). Registry clients, openid-client as RP, through the gateway:
 * - a live JWT answers `active: true` with what it carries, to its own client and to a client
 *   registered as a resource server; to any other client, and when expired, revoked (by the
 *   revocation endpoint, or its session ended), of another issuer or badly signed, `active: false`;
 * - revoking a JWT denylists it: the gateway refuses it within a second;
 * - the answers are `Cache-Control: no-store`.
 */
import { randomUUID } from 'node:crypto';
import { type JWK, SignJWT, importJWK } from 'jose';
import type * as openidClient from 'openid-client';
import { open } from '@iam/platform';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { freePort, payloadOf, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;
interface Client {
  clientId: string;
  secret: string;
  config: Config;
}
const REDIRECT = 'http://127.0.0.1:21999/callback';

describe('introspection and revocation of JWT access tokens', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;
  let app: Client;
  let other: Client;
  let rs: Client;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = Number(process.env.OIDC_INTROSPECTION_E2E_PORT ?? 0) || (await freePort());
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    const code = { redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token'], apiPermissions: ['users.manage'] };
    app = await registered(code);
    other = await registered(code);
    rs = await registered({ grantTypes: ['client_credentials'], resourceServer: true });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function registered(settings: Record<string, unknown>): Promise<Client> {
    const r = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: { name: `RP ${randomUUID().slice(0, 8)}`, type: 'confidential', ...settings } });
    expect(r.status).toBe(201);
    const secret = r.json.clientSecret as string;
    const config = await oc.discovery(new URL(issuer), r.json.clientId as string, { client_secret: secret }, oc.ClientSecretBasic(secret), { execute: [oc.allowInsecureRequests] });
    return { clientId: r.json.clientId as string, secret, config };
  }

  /** The signed-in Administrator's API token through `c` (code + PKCE, `resource` = the API): an RFC 9068 JWT. */
  async function apiJwt(c: Client): Promise<string> {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(c.config, {
      redirect_uri: REDIRECT,
      scope: 'openid email users.manage',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    const t = await oc.authorizationCodeGrant(c.config, (await signInOverHttp(url)).url, { pkceCodeVerifier: verifier, expectedState: state }, { resource: `${issuer}/api` });
    expect(t.access_token.split('.')).toHaveLength(3);
    return t.access_token;
  }

  /** POSTs to an endpoint with client_secret_basic: status, Cache-Control and body. */
  async function post(endpoint: 'introspection' | 'revocation', c: Client, token: string) {
    const res = await fetch(`${issuer}/oidc/token/${endpoint}`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${c.clientId}:${c.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    const text = await res.text();
    return { status: res.status, cacheControl: res.headers.get('cache-control'), json: (text ? JSON.parse(text) : null) as Record<string, unknown> | null };
  }
  const introspect = async (c: Client, token: string) => {
    const r = await post('introspection', c, token);
    expect(r.status).toBe(200);
    expect(r.cacheControl).toBe('no-store');
    return r.json!;
  };
  const statusAt = async (token: string) => (await fetch(`${issuer}/api/v1/users?pageSize=1`, { headers: { authorization: `Bearer ${token}` } })).status;

  /** A token signed with identity's EdDSA key (JWT_ALG), with the claims given: an expired or foreign one. */
  async function signed(claims: Record<string, unknown>, tamper = false): Promise<string> {
    const [key] = await sys.identity.dataSource.query<Array<{ kid: string; private_key: Buffer }>>("SELECT kid, private_key FROM signing_keys WHERE alg = 'EdDSA' ORDER BY activates_at DESC LIMIT 1");
    const jwk = JSON.parse(open(sys.kek, key!.private_key, key!.kid).toString('utf8')) as JWK;
    const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: key!.kid, typ: 'at+jwt' }).sign(await importJWK(jwk, 'EdDSA'));
    return tamper ? `${jwt.slice(0, -4)}AAAA` : jwt;
  }

  it('a live JWT: active with every member to its own client and to a resource server; nothing to another client', async () => {
    const token = await apiJwt(app);
    const claims = payloadOf(token);
    const own = await introspect(app, token);
    expect(own).toEqual(
      expect.objectContaining({
        active: true,
        iss: issuer,
        sub: claims.sub,
        aud: 'iam-api',
        client_id: app.clientId,
        scope: expect.stringContaining('users.manage'),
        exp: claims.exp,
        iat: claims.iat,
        jti: claims.jti,
        token_type: 'Bearer',
        permissions: ['users.manage'],
        roles: [],
      }),
    );
    expect(own.cnf).toBeUndefined();
    expect(await introspect(rs, token)).toEqual(own);
    expect(await introspect(other, token)).toEqual({ active: false });
  });

  it('expired, of another issuer, badly signed, garbage: active false, never an error; a REST login token only to a resource server', async () => {
    const now = Math.floor(Date.now() / 1000);
    const base = { sub: randomUUID(), email: '', roles: [], permissions: [], client_id: app.clientId, aud: 'iam-api', iss: issuer, jti: randomUUID() };
    // The same claims within their lifetime are active (the key and the checks are the real ones).
    expect((await introspect(app, await signed({ ...base, iat: now - 10, nbf: now - 10, exp: now + 60 }))).active).toBe(true);
    expect(await introspect(app, await signed({ ...base, iat: now - 600, nbf: now - 600, exp: now - 300 }))).toEqual({ active: false });
    expect(await introspect(app, await signed({ ...base, iss: 'https://elsewhere.example', iat: now, nbf: now, exp: now + 60 }))).toEqual({ active: false });
    expect(await introspect(app, await signed({ ...base, iat: now, nbf: now, exp: now + 60 }, true))).toEqual({ active: false });
    expect(await introspect(app, 'eyJhbGciOiJub25lIn0.e30.')).toEqual({ active: false });
    expect(await introspect(app, 'x'.repeat(43))).toEqual({ active: false });
    expect(await introspect(app, admin)).toEqual({ active: false });
    expect(await introspect(rs, admin)).toMatchObject({ active: true, sub: payloadOf(admin).sub, aud: 'iam-api' });
  });

  it('revoked by its client (RFC 7009): 200, then active false, and the gateway refuses it within a second; another client’s revocation does nothing', async () => {
    const token = await apiJwt(app);
    expect(await statusAt(token)).toBe(200);
    // Another client: 200 (RFC 7009 §2.2), and the token stands.
    expect((await post('revocation', other, token)).status).toBe(200);
    expect((await introspect(app, token)).active).toBe(true);
    expect(await statusAt(token)).toBe(200);
    expect((await post('revocation', app, token)).status).toBe(200);
    expect(await introspect(app, token)).toEqual({ active: false });
    expect(await introspect(rs, token)).toEqual({ active: false });
    await eventually(async () => (await statusAt(token)) === 401, 5_000, 100);
    // Unknown and malformed tokens: 200 as well.
    expect((await post('revocation', app, 'x'.repeat(43))).status).toBe(200);
    expect((await post('revocation', app, 'a.b.c')).status).toBe(200);
    expect((await post('revocation', app, await signed({ sub: randomUUID(), iss: 'https://elsewhere.example', exp: Math.floor(Date.now() / 1000) + 60 }))).status).toBe(200);
  });

  it('its session ended (the sessions API): active false, 401 at the gateway', async () => {
    const token = await apiJwt(app);
    const sid = payloadOf(token).sid as string;
    expect(sid).toEqual(expect.any(String));
    expect((await http(issuer, 'DELETE', `/api/v1/me/sessions/${sid}`, { token: admin })).status).toBe(204);
    expect(await introspect(app, token)).toEqual({ active: false });
    await eventually(async () => (await statusAt(token)) === 401, 5_000, 100);
  });

  it('a DPoP-bound token is introspected with its cnf.jkt and token_type DPoP', async () => {
    const bound = await registered({ grantTypes: ['client_credentials'], roles: ['Administrator'], dpopBound: true });
    const key = await oc.randomDPoPKeyPair('ES256');
    const t = await oc.clientCredentialsGrant(bound.config, undefined, { DPoP: oc.getDPoPHandle(bound.config, key) });
    const jkt = (payloadOf(t.access_token).cnf as { jkt: string }).jkt;
    expect(await introspect(bound, t.access_token)).toMatchObject({ active: true, sub: bound.clientId, client_id: bound.clientId, token_type: 'DPoP', cnf: { jkt } });
  });

  it('the library’s own tokens keep their rules: a refresh token only to its client (not a resource server); an opaque access token to a resource server too', async () => {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(app.config, { redirect_uri: REDIRECT, scope: 'openid offline_access', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, prompt: 'consent' });
    const t = await oc.authorizationCodeGrant(app.config, (await signInOverHttp(url)).url, { pkceCodeVerifier: verifier, expectedState: state });
    expect((await introspect(app, t.refresh_token!)).active).toBe(true);
    expect(await introspect(rs, t.refresh_token!)).toEqual({ active: false });
    expect(await introspect(other, t.refresh_token!)).toEqual({ active: false });
    expect(await introspect(rs, t.access_token)).toMatchObject({ active: true, client_id: app.clientId, token_type: 'Bearer' });
    expect(await introspect(other, t.access_token)).toEqual({ active: false });
  });
});

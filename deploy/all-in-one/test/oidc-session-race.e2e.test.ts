/**
 * Issue #35, item 4: identity's session of a provider sign-in is written before the code leaves.
 * It used to be written fire-and-forget after `authorization.success`, so a fast code exchange
 * could overtake it (about 1 in 100–200 sign-ins): the API token then had no `sid`, was recorded
 * under no session and outlived the session's end. A test hook delays the write: the redirect
 * waits for it, the token names its session, and ending the sessions stops the token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { freePort } from './support/nats';
import { signInOverHttp } from './support/oidc-rp';

jest.setTimeout(120_000);

const REDIRECT = 'http://127.0.0.1:21999/callback';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("OpenID provider: a sign-in's session is written before its code leaves", () => {
  let sys: TestSystem;
  let oc: typeof openidClient;
  let issuer: string;
  let admin: string;
  let delayMs = 0;
  let writes = 0;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({
      env: { PORT: String(port), PUBLIC_URL: issuer },
      identityFaults: {
        beforeOpSessionWrite: async () => {
          await sleep(delayMs);
          writes += 1;
        },
      },
    });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  it('a code exchanged at once gets a token with its session id, and ending the sessions stops it', async () => {
    const email = `race-${randomUUID()}@example.com`;
    const password = `Race!${randomBytes(8).toString('hex')}#Aa9`;
    const user = await http(issuer, 'POST', '/api/v1/users', { token: admin, body: { firstName: 'R', lastName: 'C', email, password } });
    expect(user.status).toBe(201);
    const made = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `Race ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [REDIRECT], postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token'] },
    });
    expect(made.status).toBe(201);
    const { clientId, clientSecret } = made.json as { clientId: string; clientSecret: string };
    const config = await oc.discovery(new URL(issuer), clientId, { client_secret: clientSecret }, oc.ClientSecretBasic(clientSecret), { execute: [oc.allowInsecureRequests] });
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    delayMs = 1_500;
    const before = writes;
    const end = await signInOverHttp(url, { email, password });
    delayMs = 0;
    // The code is exchanged the moment it arrives, as a fast app does.
    const tokens = await oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: verifier, expectedState: state }, { resource: `${issuer}/api` });
    expect(writes).toBe(before + 1);
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString('utf8')) as { sid?: string };
    expect(claims.sid).toEqual(expect.any(String));
    expect((await http(issuer, 'GET', '/api/v1/me', { token: tokens.access_token })).status).toBe(200);
    expect((await http(issuer, 'DELETE', `/api/v1/users/${user.json.id}/sessions`, { token: admin })).status).toBe(204);
    await eventually(async () => (await http(issuer, 'GET', '/api/v1/me', { token: tokens.access_token })).status === 401, 1_000, 50);
  });
});

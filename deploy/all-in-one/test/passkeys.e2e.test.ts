/**
 * Passkeys and the OpenID provider's factor step end to end (issue #24): REST passkey
 * registration, passwordless login and passkey as second factor with a software authenticator;
 * no enumeration on the passwordless options; an administrator ending one session; and in
 * Chromium (its virtual authenticator over the DevTools Protocol) a passkey registered in the
 * browser, then a sign-in on the hosted page with the passkey alone, with password + TOTP and with
 * a recovery code, and step-up by max_age, with axe on the factor pages.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClient } from '@iam/identity';
import { StaticClientLookup } from '../../../services/identity/src/testing/static-client-lookup';
import { SoftAuthenticator } from '../../../services/identity/src/testing/soft-authenticator';
import type { Browser, Page } from 'playwright-core';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from './harness';
import { claimsOf, totp } from './support/factors';
import { axe, browserTestsRunnable, launchChromium } from './support/browser';
import { type RpServer, startRpServer } from './support/rp-server';

jest.setTimeout(120_000);

const hasBrowser = browserTestsRunnable(__filename);
const browserIt = hasBrowser ? it : it.skip;
/** In this helper's port range. */
const PORT = 27310;
const ISSUER = `http://localhost:${PORT}`;
const SECRET = randomBytes(24).toString('base64url');
const now = new Date();
const RP: OAuthClient = {
  clientId: 'rp-mfa',
  name: 'Factor app',
  type: 'confidential',
  grantTypes: ['authorization_code', 'refresh_token'],
  /** The app's own server's (support/rp-server.ts, another origin), set when it starts. */
  redirectUris: [],
  postLogoutRedirectUris: [],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
  idTokenSignedResponseAlg: 'RS256',
  userinfoSignedResponseAlg: null,
  resourceServer: false,
  firstParty: true,
  builtIn: false,
  createdAt: now,
  updatedAt: now,
};

describe('passkeys and the provider factor step (end to end)', () => {
  let sys: TestSystem;
  let admin: string;
  let browser: Browser;
  let rp: RpServer;
  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(sys.url(0), method, path, opts);
  const login = (email: string, password: string) => call('POST', '/api/v1/auth/generate-jwt', { body: { email, password } });

  async function newUser() {
    const email = uniqueEmail('pk');
    const password = strongPassword();
    const res = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Grace', lastName: 'Hopper', email, password } });
    expect(res.status).toBe(201);
    return { id: res.json.id as string, email, password };
  }

  beforeAll(async () => {
    rp = await startRpServer();
    const client: OAuthClient = { ...RP, redirectUris: [rp.callback] };
    sys = await startTestSystem({ env: { PORT: String(PORT), PUBLIC_URL: ISSUER }, identityClients: new StaticClientLookup([{ client, secret: SECRET }]) });
    admin = (await login(ADMIN.email, ADMIN.password)).json.token as string;
    if (hasBrowser) browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
    await rp?.close();
  });

  it('REST: register a passkey, sign in with it alone (amr hwk+mfa), and answer a password login with it (methods webauthn, amr pwd+hwk+mfa)', async () => {
    const u = await newUser();
    const token = (await login(u.email, u.password)).json.token as string;
    const a = new SoftAuthenticator(ISSUER);
    const options = await call('POST', '/api/v1/me/passkeys/options', { token });
    expect(options.status).toBe(200);
    expect(options.json).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { userVerification: 'required', residentKey: 'required' } });
    const created = await call('POST', '/api/v1/me/passkeys', { token, body: { name: 'Laptop', response: a.create(options.json as never) } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'Laptop', deviceType: 'singleDevice', backedUp: false });
    expect((await call('GET', '/api/v1/me/passkeys', { token })).json).toEqual({ items: [created.json] });
    expect((await call('GET', '/api/v1/me/mfa', { token })).json).toMatchObject({ passkeys: 1 });

    const signInOptions = (await call('POST', '/api/v1/auth/passkey/options')).json;
    const pw = await call('POST', '/api/v1/auth/passkey', { body: { response: a.get(signInOptions as never) } });
    expect(pw.status).toBe(200);
    expect(claimsOf(pw.json.token as string)).toMatchObject({ sub: u.id, amr: ['hwk', 'mfa'] });

    const first = await login(u.email, u.password);
    expect(first.status).toBe(401);
    expect(first.json).toMatchObject({ type: 'urn:iam:problem:mfa-required', methods: ['webauthn'] });
    const mfaOptions = await call('POST', '/api/v1/auth/mfa/webauthn/options', { body: { mfaToken: first.json.mfaToken } });
    expect(mfaOptions.status).toBe(200);
    const done = await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: first.json.mfaToken, webauthn: a.get(mfaOptions.json as never) } });
    expect(done.status).toBe(200);
    expect(claimsOf(done.json.token as string)).toMatchObject({ sub: u.id, amr: ['pwd', 'hwk', 'mfa'] });
  });

  it('REST: a wrong passkey factor is one 401; the options of an account without passkeys are 409; an enrolment-only route refuses a verify token', async () => {
    const u = await newUser();
    const token = (await login(u.email, u.password)).json.token as string;
    const secret = (await call('POST', '/api/v1/me/mfa/totp', { token })).json.secret as string;
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token, body: { code: totp(secret, -1) } })).status).toBe(204);
    const first = await login(u.email, u.password);
    expect(first.json).toMatchObject({ methods: ['totp'] });
    expect((await call('POST', '/api/v1/auth/mfa/webauthn/options', { body: { mfaToken: first.json.mfaToken } })).status).toBe(409);
    expect((await call('POST', '/api/v1/auth/mfa/passkey/options', { body: { mfaToken: first.json.mfaToken } })).status).toBe(409);
    const stranger = new SoftAuthenticator(ISSUER);
    stranger.create({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'eA' } });
    const wrong = await call('POST', '/api/v1/auth/mfa', { body: { mfaToken: first.json.mfaToken, webauthn: stranger.get({ challenge: 'eA' }) } });
    expect(wrong.status).toBe(401);
    expect((await call('GET', `/api/v1/users/${u.id}/security`, { token: admin })).json).toMatchObject({ failedAttempts: 1 });
  });

  it('no enumeration: the passwordless options have one shape and name no credential; a wrong assertion is one 401', async () => {
    const x = await call('POST', '/api/v1/auth/passkey/options');
    const y = await call('POST', '/api/v1/auth/passkey/options');
    expect(x.status).toBe(200);
    expect(Object.keys(x.json).sort()).toEqual(Object.keys(y.json).sort());
    expect(x.json.allowCredentials).toEqual([]);
    const stranger = new SoftAuthenticator(ISSUER);
    stranger.create({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'eA' } });
    const r = await call('POST', '/api/v1/auth/passkey', { body: { response: stranger.get(x.json as never) } });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ status: 401, detail: 'The passkey could not be verified.' });
  });

  it('an administrator ends one session of a user; the other stays', async () => {
    const u = await newUser();
    const t1 = (await login(u.email, u.password)).json.token as string;
    const t2 = (await login(u.email, u.password)).json.token as string;
    const sid1 = String(claimsOf(t1).sid);
    expect((await call('DELETE', `/api/v1/users/${u.id}/sessions/${sid1}`, { token: admin })).status).toBe(204);
    expect((await call('DELETE', `/api/v1/users/${u.id}/sessions/${sid1}`, { token: admin })).status).toBe(404);
    const left = (await call('GET', `/api/v1/users/${u.id}/sessions`, { token: admin })).json.items as Array<{ id: string }>;
    expect(left.map((s) => s.id)).toEqual([String(claimsOf(t2).sid)]);
  });

  /** A browser page at the provider's sign-in for RP (PKCE); `finish` waits for the code at the app's server and exchanges it. */
  async function authorize(page: Page, extra: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({ client_id: RP.clientId, response_type: 'code', redirect_uri: rp.callback, scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256', state: 's', ...extra });
    await page.goto(`${ISSUER}/oidc/auth?${q.toString()}`);
    return {
      /** The ID token's claims (and, with `api`, the API access token of the grant). */
      async finish(api = false): Promise<Record<string, unknown>> {
        // The browser arrives at the app's own server (another origin; the pages' CSP enforced).
        const code = (await rp.next('/callback')).searchParams.get('code');
        expect(code).toBeTruthy();
        await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
        const res = await fetch(`${ISSUER}/oidc/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${RP.clientId}:${SECRET}`).toString('base64')}` },
          body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: rp.callback, code_verifier: verifier, ...(api ? { resource: `${ISSUER}/api` } : {}) }),
        });
        const body = (await res.json()) as Record<string, string>;
        expect(res.status).toBe(200);
        return { ...claimsOf(body.id_token!), ...(api ? { accessToken: body.access_token } : {}) };
      },
    };
  }

  async function password(page: Page, email: string, pw: string) {
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(pw);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  browserIt('hosted sign-in: password + TOTP (a wrong code counts toward the lockout), then a recovery code; max_age forces a fresh sign-in; the factor pages pass axe', async () => {
    const u = await newUser();
    const token = (await login(u.email, u.password)).json.token as string;
    const secret = (await call('POST', '/api/v1/me/mfa/totp', { token })).json.secret as string;
    expect((await call('POST', '/api/v1/me/mfa/totp/activate', { token, body: { code: totp(secret, -1) } })).status).toBe(204);
    const codes = (await call('POST', '/api/v1/me/mfa/recovery-codes', { token })).json.codes as string[];

    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    try {
      let flow = await authorize(page);
      await password(page, u.email, u.password);
      await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.getByLabel('Code from your authenticator app').fill('000000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').waitFor();
      // The wrong code counted toward the account's lockout.
      expect((await call('GET', `/api/v1/users/${u.id}/security`, { token: admin })).json).toMatchObject({ locked: false, failedAttempts: 1 });
      await page.getByLabel('Code from your authenticator app').fill(totp(secret));
      await page.getByRole('button', { name: 'Continue' }).click();
      const idt = await flow.finish();
      expect(idt).toMatchObject({ sub: u.id, amr: ['pwd', 'otp', 'mfa'], acr: 'urn:iam:acr:mfa', auth_time: expect.any(Number) });

      // The session holds: no sign-in page. max_age=0 asks for a fresh one (with the factor again).
      // (auth_time has whole seconds: a sign-in is older than max_age=0 only in a later second.)
      await new Promise((r) => setTimeout(r, 2_100));
      flow = await authorize(page, { max_age: '0' });
      await password(page, u.email, u.password);
      await page.getByText('Use a recovery code').click();
      await page.getByLabel('Recovery code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Use the recovery code' }).click();
      const again = await flow.finish();
      expect(again).toMatchObject({ sub: u.id, amr: ['pwd', 'otp', 'mfa'] });
      expect(Number(again.auth_time)).toBeGreaterThan(Number(idt.auth_time));
    } finally {
      await context.close();
    }
  });

  browserIt('step-up by acr_values=urn:iam:acr:mfa: an account with no factor enrols an authenticator app on the hosted page (QR code and key), then signs in with acr mfa; the SSO session without mfa is asked again', async () => {
    const u = await newUser();
    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    try {
      let flow = await authorize(page);
      await password(page, u.email, u.password);
      expect(await flow.finish()).toMatchObject({ sub: u.id, acr: 'urn:iam:acr:pwd', amr: ['pwd'] });

      flow = await authorize(page, { acr_values: 'urn:iam:acr:mfa' });
      await password(page, u.email, u.password);
      await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
      await page.getByRole('img', { name: 'QR code of the authenticator app key' }).waitFor();
      expect(await axe(page)).toEqual([]);
      const key = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
      await page.getByLabel('Code from your authenticator app').fill(totp(key));
      await page.getByRole('button', { name: 'Turn on and continue' }).click();
      expect(await flow.finish()).toMatchObject({ sub: u.id, acr: 'urn:iam:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
      const token = (await login(u.email, u.password)).json;
      expect(token).toMatchObject({ type: 'urn:iam:problem:mfa-required', methods: ['totp'] });
    } finally {
      await context.close();
    }
  });

  browserIt('enrolment on the hosted page with a passkey (Chromium virtual authenticator): step-up for an account with no factor, then the passkey is listed', async () => {
    const u = await newUser();
    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    try {
      const flow = await authorize(page, { acr_values: 'urn:iam:acr:mfa' });
      await password(page, u.email, u.password);
      await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
      await page.getByRole('button', { name: 'Use a passkey instead' }).click();
      const idt = await flow.finish();
      expect(idt).toMatchObject({ sub: u.id, acr: 'urn:iam:acr:mfa' });
      expect(idt.amr).toEqual(['pwd', expect.stringMatching(/^(hwk|swk)$/), 'mfa']);
      const first = await login(u.email, u.password);
      expect(first.json).toMatchObject({ type: 'urn:iam:problem:mfa-required', methods: ['webauthn'] });
    } finally {
      await context.close();
    }
  });

  browserIt('an OpenID provider session is in the sessions list (device, IP, times; current for its own API token); ending it stops its API token and the provider session', async () => {
    const u = await newUser();
    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    try {
      const flow = await authorize(page);
      await password(page, u.email, u.password);
      const signedIn = await flow.finish(true);
      const at = String(signedIn.accessToken);
      expect(claimsOf(at)).toMatchObject({ sub: u.id, amr: ['pwd'], acr: 'urn:iam:acr:pwd', auth_time: expect.any(Number), sid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const mine = await call('GET', '/api/v1/me/sessions', { token: at });
      expect(mine.status).toBe(200);
      const op = (mine.json.items as Array<Record<string, unknown>>).find((x) => x.current === true);
      expect(op).toMatchObject({ id: claimsOf(at).sid, device: expect.stringContaining('Linux'), ip: expect.any(String), amr: ['pwd'] });
      expect((await call('GET', `/api/v1/users/${u.id}/sessions`, { token: admin })).json.items).toEqual([expect.objectContaining({ id: op!.id })]);

      // Ended (here by an administrator): its API token is refused, and the provider asks to sign in again.
      expect((await call('DELETE', `/api/v1/users/${u.id}/sessions/${String(op!.id)}`, { token: admin })).status).toBe(204);
      for (let i = 0; i < 20 && (await call('GET', '/api/v1/me/sessions', { token: at })).status !== 401; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await call('GET', '/api/v1/me/sessions', { token: at })).status).toBe(401);
      await authorize(page);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    } finally {
      await context.close();
    }
  });

  browserIt('Chromium virtual authenticator: a passkey registered in the browser, then a sign-in on the hosted page with the passkey alone', async () => {
    const u = await newUser();
    const token = (await login(u.email, u.password)).json.token as string;
    const context = await browser.newContext({ bypassCSP: false });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    try {
      // Register on a page of the origin that loads @simplewebauthn/browser (the hosted sign-in).
      const flow = await authorize(page);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const registered = await page.evaluate<{ status: number }, string>(async (bearer) => {
        const w = (globalThis as unknown as { SimpleWebAuthnBrowser: { startRegistration(o: unknown): Promise<unknown> } });
        const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
        const options = await (await fetch('/api/v1/me/passkeys/options', { method: 'POST', headers, body: '{}' })).json();
        const response = await w.SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options });
        const r = await fetch('/api/v1/me/passkeys', { method: 'POST', headers, body: JSON.stringify({ name: 'Chromium', response }) });
        return { status: r.status };
      }, token);
      expect(registered.status).toBe(201);
      // Signed out (no provider session yet): the passkey alone.
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      const idt = await flow.finish();
      expect(idt).toMatchObject({ sub: u.id, acr: 'urn:iam:acr:mfa' });
      expect(idt.amr).toEqual([expect.stringMatching(/^(hwk|swk)$/), 'mfa']);
    } finally {
      await context.close();
    }
  });
});

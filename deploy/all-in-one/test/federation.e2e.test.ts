/**
 * Signing in with another identity provider end to end (issue #40), the platform on a known port
 * (its issuer), a real upstream OP on another loopback port (a bare oidc-provider), through the
 * gateway: linking from the account API (a fresh sign-in, the upstream's callback back to the
 * account page, completed with the page's binding), the list, the administrator's view, and
 * unlinking; refusals audited.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '@iam/platform/testing';
import type { Page } from 'playwright-core';
import { followToCallback } from '../../../services/identity/src/testing/follow-upstream';
import { type UpstreamOp, startUpstreamOp } from '../../../services/identity/src/testing/upstream-op';
import { axe, cspContext } from './support/browser';
import { claimsOf, totp } from './support/factors';
import { browserTest, oidcSuite } from './support/oidc-suite';

const browserIt = browserTest(__filename);

jest.setTimeout(120_000);

describe('federation: linked identities through the account API', () => {
  const s = oidcSuite({ portEnv: 'FEDERATION_E2E_PORT' });
  let op: UpstreamOp;
  const NAME = 'corp';
  const PROVE = 'corp-prove';
  const MFA = 'corp-mfa';
  const callback = (name = NAME) => `${s.issuer}/oidc/federation/${name}/callback`;

  const login = async (email: string, password: string) => {
    const r = await fetch(`${s.issuer}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    return ((await r.json()) as { token: string }).token;
  };
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${s.issuer}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.text();
    return { status: r.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
  };

  beforeAll(async () => {
    op = await startUpstreamOp({ redirectUris: [callback(), callback(PROVE), callback(MFA)] });
    const made = await s.asAdmin('POST', '/api/v1/identity-providers', {
      kind: 'oidc',
      name: NAME,
      displayName: 'Corp SSO',
      discoveryUrl: op.discoveryUrl,
      clientId: op.clientId,
      clientSecret: op.clientSecret,
      trustEmailVerified: true,
      allowSignUp: true,
    });
    expect(made.status).toBe(201);
    // Not trusted about emails: a match asks the user to sign in to the account first.
    const prove = await s.asAdmin('POST', '/api/v1/identity-providers', { kind: 'oidc', name: PROVE, displayName: 'Corp partners', discoveryUrl: op.discoveryUrl, clientId: op.clientId, clientSecret: op.clientSecret });
    expect(prove.status).toBe(201);
  });

  afterAll(async () => {
    await op?.close();
  });

  it('link from the account (fresh sign-in), listed for the user and the administrator, unlinked; audited', async () => {
    const u = await s.newUser();
    const token = await login(u.email, u.password);
    const mine = await call(token, 'GET', '/api/v1/me/identities');
    expect(mine.json).toEqual({ items: [], providers: [{ name: NAME, displayName: 'Corp SSO', kind: 'oidc', iconUrl: '' }, { name: PROVE, displayName: 'Corp partners', kind: 'oidc', iconUrl: '' }] });

    const binding = randomBytes(24).toString('base64url');
    const started = await call(token, 'POST', `/api/v1/me/identities/${NAME}/link`, { binding });
    expect(started.status).toBe(200);
    op.signInAs({ sub: `corp-${randomBytes(4).toString('hex')}`, email: `elsewhere-${randomBytes(3).toString('hex')}@corp.example`, emailVerified: true });
    const upstreamBack = await followToCallback(new URL(started.json.url as string), callback());
    // The provider's callback sends the browser back to the account page with the query.
    const hop = await fetch(upstreamBack, { redirect: 'manual' });
    expect(hop.status).toBe(303);
    const accountUrl = new URL(hop.headers.get('location')!, s.issuer);
    expect(accountUrl.pathname).toBe('/account');
    expect(accountUrl.searchParams.get('federation')).toBe(NAME);
    // Another binding (another browser tab or a forged completion) is refused; the attempt is spent.
    const done = await call(token, 'POST', `/api/v1/me/identities/${NAME}/complete`, { binding, callbackQuery: accountUrl.search });
    expect(`${done.status} ${done.text}`).toMatch(/^201/);
    expect(done.json).toMatchObject({ provider: NAME, providerDisplayName: 'Corp SSO', issuer: op.issuer });
    const again = await call(token, 'POST', `/api/v1/me/identities/${NAME}/complete`, { binding, callbackQuery: accountUrl.search });
    expect(again.status).toBe(400);

    expect(((await call(token, 'GET', '/api/v1/me/identities')).json.items as unknown[]).length).toBe(1);
    const admin = await s.asAdmin('GET', `/api/v1/users/${u.userId}/identities`);
    expect(((await admin.json()) as { items: Array<{ id: string }> }).items).toHaveLength(1);

    const id = done.json.id as string;
    expect((await call(token, 'DELETE', `/api/v1/me/identities/${id}`)).status).toBe(204);
    expect(((await call(token, 'GET', '/api/v1/me/identities')).json.items as unknown[]).length).toBe(0);

    const trail = await eventually(async () => {
      const r = await s.asAdmin('GET', `/api/v1/audit-events?targetId=${u.userId}`);
      const items = ((await r.json()) as { items: Array<{ action: string }> }).items;
      return items.some((i) => i.action === 'identity.unlinked') ? items : undefined;
    }, 10_000, 100);
    expect(trail.map((i) => i.action)).toEqual(expect.arrayContaining(['identity.linked', 'identity.unlinked']));
  });

  it('no token: 401', async () => {
    const started = await call('not-a-token', 'GET', '/api/v1/me/identities');
    expect(started.status).toBe(401);
  });

  browserIt('Chromium, CSP enforced, the app on another origin: a button per enabled provider; the upstream signs in, an account is made, back at the app with amr fed', async () => {
    const config = await s.discover(s.c.spa);
    const { url, verifier, state } = await s.authorization(config, { prompt: 'login', scope: 'openid email' });
    const email = `jit-${randomBytes(4).toString('hex')}@corp.example`;
    op.signInAs({ sub: `corp-${randomBytes(4).toString('hex')}`, email, emailVerified: true, givenName: 'Jit', familyName: 'User' });
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(url.href);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const callbackUrl = await s.rp.next('/callback');
    const tokens = await s.oc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).toEqual(expect.objectContaining({ email, amr: ['fed'] }));
    const users = (await (await s.asAdmin('GET', `/api/v1/users?q=${encodeURIComponent(email)}`)).json()) as { items: Array<{ email: string; emailVerified: boolean; firstName: string }> };
    expect(users.items).toEqual([expect.objectContaining({ email, emailVerified: true, firstName: 'Jit' })]);
  });

  browserIt('the upstream down: a clear page, nothing written', async () => {
    const config = await s.discover(s.c.spa);
    const { url } = await s.authorization(config, { prompt: 'login', scope: 'openid email' });
    // A provider never reached before (none of its discovery is kept), its upstream down.
    const made = await s.asAdmin('POST', '/api/v1/identity-providers', { kind: 'oidc', name: 'corp-backup', displayName: 'Corp backup', discoveryUrl: op.discoveryUrl, clientId: op.clientId, clientSecret: op.clientSecret });
    expect(made.status).toBe(201);
    const { context, page, violations } = await cspContext(s.browser);
    op.setUp(false);
    try {
      await page.goto(url.href);
      await page.getByRole('link', { name: 'Sign in with Corp backup' }).click();
      await page.getByRole('heading', { name: 'Try again shortly' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      op.setUp(true);
      await context.close();
    }
  });

  /** Drives one sign-in at the hosted page through a provider's button; answers the page for `then`. */
  async function throughButton(button: string, then: (page: Page) => Promise<void>) {
    const config = await s.discover(s.c.spa);
    const { url } = await s.authorization(config, { prompt: 'login', scope: 'openid email' });
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(url.href);
      await page.getByRole('link', { name: `Sign in with ${button}` }).click();
      await then(page);
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  }
  const verifyEmail = (userId: string) => s.system.directory.dataSource.query('UPDATE users SET email_verified = true WHERE id = $1', [userId]);
  const linksOf = async (userId: string) => ((await (await s.asAdmin('GET', `/api/v1/users/${userId}/identities`)).json()) as { items: unknown[] }).items;

  browserIt('re-authentication before linking: an untrusted provider matching a verified account asks its password, then links (another account\'s password links nothing)', async () => {
    const u = await s.newUser();
    await verifyEmail(u.userId);
    const other = await s.newUser();
    const sub = `partner-${randomBytes(4).toString('hex')}`;
    op.signInAs({ sub, email: u.email, emailVerified: true });
    await throughButton('Corp partners', async (page) => {
      await page.getByRole('heading', { name: 'Connect your account' }).waitFor();
      expect(await axe(page)).toEqual([]);
      await page.getByLabel('Email').fill(other.email);
      await page.getByLabel('Password').fill(other.password);
      await page.getByRole('button', { name: 'Sign in and connect' }).click();
      await page.getByRole('heading', { name: 'Not connected' }).waitFor();
    });
    expect(await linksOf(other.userId)).toHaveLength(0);
    expect(await linksOf(u.userId)).toHaveLength(0);
    await throughButton('Corp partners', async (page) => {
      await page.getByRole('heading', { name: 'Connect your account' }).waitFor();
      await page.getByLabel('Email').fill(u.email);
      await page.getByLabel('Password').fill(u.password);
      await page.getByRole('button', { name: 'Sign in and connect' }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
    });
    expect(await linksOf(u.userId)).toHaveLength(1);
    await s.rp.next('/callback');
    // The next sign-in with it goes straight through.
    await throughButton('Corp partners', (page) => page.getByRole('heading', { name: 'Back at the app' }).waitFor());
    await s.rp.next('/callback');
  });

  browserIt('upstream amr: a second factor used upstream counts only for a provider trusted for it (trustUpstreamMfa); otherwise ours is asked', async () => {
    const trusted = await s.asAdmin('POST', '/api/v1/identity-providers', { kind: 'oidc', name: MFA, displayName: 'Corp MFA', discoveryUrl: op.discoveryUrl, clientId: op.clientId, clientSecret: op.clientSecret, trustEmailVerified: true, trustUpstreamMfa: true });
    expect(trusted.status).toBe(201);
    const u = await s.newUser();
    await verifyEmail(u.userId);
    const token = await login(u.email, u.password);
    const secret = (await call(token, 'POST', '/api/v1/me/mfa/totp')).json.secret as string;
    expect((await call(token, 'POST', '/api/v1/me/mfa/totp/activate', { code: totp(secret, -1) })).status).toBe(204);
    // The same upstream account behind both providers, a second factor used there.
    const sub = `mfa-${randomBytes(4).toString('hex')}`;
    op.signInAs({ sub, email: u.email, emailVerified: true, amr: ['pwd', 'mfa'] });
    const signIn = async (button: string, then: (page: Page) => Promise<void>) => {
      const config = await s.discover(s.c.spa);
      const { url, verifier, state } = await s.authorization(config, { prompt: 'login', scope: 'openid email' });
      const { context, page, violations } = await cspContext(s.browser);
      try {
        await page.goto(url.href);
        await page.getByRole('link', { name: `Sign in with ${button}` }).click();
        await then(page);
        await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
        expect(violations).toEqual([]);
      } finally {
        await context.close();
      }
      const tokens = await s.oc.authorizationCodeGrant(config, await s.rp.next('/callback'), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      return claimsOf(tokens.id_token!);
    };
    // Trusted: no second factor asked here; our amr says the sign-in was federated and multi-factor.
    expect(await signIn('Corp MFA', async () => undefined)).toMatchObject({ sub: u.userId, amr: ['fed', 'mfa'], acr: 'urn:iam:acr:mfa' });
    // Not trusted for it (Corp SSO): the upstream's mfa counts for nothing, our TOTP is asked.
    const asked = await signIn('Corp SSO', async (page) => {
      await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
      await page.getByLabel('Code from your authenticator app').fill(totp(secret));
      await page.getByRole('button', { name: 'Continue' }).click();
    });
    expect(asked).toMatchObject({ sub: u.userId, amr: ['fed', 'otp', 'mfa'] });
    // Trusted, but a password alone upstream this time: ours is asked.
    op.signInAs({ sub, email: u.email, emailVerified: true, amr: ['pwd'] });
    const pwdOnly = await signIn('Corp MFA', async (page) => {
      await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
      await page.getByLabel('Code from your authenticator app').fill(totp(secret, 1));
      await page.getByRole('button', { name: 'Continue' }).click();
    });
    expect(pwdOnly).toMatchObject({ sub: u.userId, amr: ['fed', 'otp', 'mfa'] });
    expect(await linksOf(u.userId)).toHaveLength(2);
  });

  browserIt('pre-hijack: an unverified account with the same email is refused (a page says to verify it first), nothing linked', async () => {
    const squatter = await s.newUser();
    op.signInAs({ sub: `victim-${randomBytes(4).toString('hex')}`, email: squatter.email, emailVerified: true });
    await throughButton('Corp SSO', (page) => page.getByRole('heading', { name: 'Verify your email first' }).waitFor());
    expect(await linksOf(squatter.userId)).toHaveLength(0);
  });
});

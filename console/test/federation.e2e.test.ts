/**
 * Issue #40's "done when" in a real browser (Debian's Chromium, every page's CSP enforced): an
 * administrator configures an upstream OpenID provider on the console's Identity providers page; a
 * new person signs in with it on the hosted sign-in page of an app on another origin (an account
 * is made for them); a person with a password links it from the account page (a fresh sign-in
 * here first, then the provider), the administrator sees it on the user's page, and the person
 * unlinks it. The upstream is a real, independent OpenID
 * provider on its own loopback port (a bare oidc-provider: services/identity/src/testing/upstream-op.ts).
 * Skipped, saying why, without /usr/bin/chromium or a built console, and against a running system
 * (it starts its own upstream, which that system would not know). Screenshots: console/test-output/federation/.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { browserTestsRunnable, eventually } from '@iam/platform/testing';
import type { BrowserContext, Page } from 'playwright-core';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from '../../deploy/all-in-one/test/harness';
import { type RpServer, startRpServer } from '../../deploy/all-in-one/test/support/rp-server';
import { type UpstreamOp, startUpstreamOp } from '../../services/identity/src/testing/upstream-op';
import { axeOf, launchProfile } from './browser';
import { AccountPage } from './hosted-pages';
import { IdentityProvidersPage } from './identity-providers-page';
import { ConsoleApp, SignInPage } from './pages';
import { freePort } from './support';

const DIST = join(__dirname, '..', 'dist', 'account.html');
const OUT = join(__dirname, '..', 'test-output', 'federation');
const external = process.env.CONSOLE_TEST_BASE_URL;
if (external) console.warn('console federation walk skipped: it runs its own upstream provider, which a running system does not know (it runs in make test)');
const suite = !external && browserTestsRunnable(__filename, { paths: [DIST], fix: 'make build' }) ? describe : describe.skip;

jest.setTimeout(180_000);

const NAME = 'corp';
const BUTTON = 'Corp SSO';

suite('an identity provider configured in the console, signed in with, linked and unlinked (Chromium)', () => {
  let system: TestSystem;
  let op: UpstreamOp;
  let rp: RpServer;
  let base: string;
  let context: BrowserContext;
  let userDataDir: string;
  let cspViolations: string[];
  let page: Page;

  const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(base, method, path, opts);
  const admin = async () => (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token as string;
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await startUpstreamOp({ redirectUris: [`${base}/oidc/federation/${NAME}/callback`] });
    system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: base } });
    rp = await startRpServer();
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    ({ context, userDataDir, cspViolations } = await launchProfile('console-federation-'));
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await page?.screenshot({ path: join(OUT, 'last.png') }).catch(() => undefined);
    await context?.close();
    await system?.stop();
    await op?.close();
    await rp?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  /** An authorization request of the app on the other origin (a public client, PKCE). */
  async function appSignInUrl(clientId: string): Promise<string> {
    const config = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string };
    const url = new URL(config.authorization_endpoint);
    const verifier = randomBytes(32).toString('base64url');
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: rp.callback,
      response_type: 'code',
      scope: 'openid email',
      state: randomBytes(16).toString('base64url'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return url.href;
  }

  it('the administrator adds it on the console; a new person signs in with it at an app; a person links it on the account page and unlinks it', async () => {
    // 1. The administrator configures the provider on the console's page.
    const app = new ConsoleApp(page, base, OUT);
    await app.open();
    await new SignInPage(app).signIn(ADMIN.email, ADMIN.password);
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    const providers = new IdentityProvidersPage(app);
    await providers.open();
    await providers.add({ name: NAME, displayName: BUTTON, discoveryUrl: op.discoveryUrl, clientId: op.clientId, clientSecret: op.clientSecret, trustEmailVerified: true, allowSignUp: true });
    await app.status().filter({ hasText: `Identity provider ${BUTTON} configured.` }).waitFor();
    await providers.row(BUTTON).waitFor();
    await shot('01-provider-added');
    expect(await axeOf(page)).toEqual([]);
    await app.signOut();
    await context.clearCookies();

    // 2. A new person signs in with it at an app on another origin: an account is made for them.
    const token = await admin();
    const client = await call('POST', '/api/v1/clients', { token, body: { name: 'Partner app', type: 'public', redirectUris: [rp.callback], postLogoutRedirectUris: [], grantTypes: ['authorization_code'] } });
    expect(client.status).toBe(201);
    const newcomer = `newcomer-${randomBytes(4).toString('hex')}@corp.example`;
    op.signInAs({ sub: `corp-${randomBytes(4).toString('hex')}`, email: newcomer, emailVerified: true, givenName: 'Nora', familyName: 'Newcomer' });
    await page.goto(await appSignInUrl(client.json.clientId as string));
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.getByRole('link', { name: `Sign in with ${BUTTON}` }).click();
    const allow = page.getByRole('button', { name: 'Allow' });
    const back = page.getByRole('heading', { name: 'Back at the app' });
    await allow.or(back).waitFor();
    if (await allow.isVisible()) await allow.click();
    await back.waitFor();
    expect((await rp.next('/callback')).searchParams.get('code')).toBeTruthy();
    const made = await call('GET', `/api/v1/users?q=${encodeURIComponent(newcomer)}`, { token });
    expect(made.json.items).toEqual([expect.objectContaining({ email: newcomer, emailVerified: true, firstName: 'Nora' })]);
    await context.clearCookies();

    // 3. A person with a password links it from the account page: a fresh sign-in here, then the provider.
    const email = uniqueEmail('linker');
    const password = strongPassword();
    const user = await call('POST', '/api/v1/users', { token, body: { firstName: 'Lin', lastName: 'Ker', email, password } });
    expect(user.status).toBe(201);
    await page.goto(`${base}/account`);
    const account = new AccountPage(page);
    await account.signIn(email, password);
    await account.section('Other sign-ins').getByText('No other sign-in is linked to your account.').waitFor();
    op.signInAs({ sub: `corp-${randomBytes(4).toString('hex')}`, email: `lin-${randomBytes(3).toString('hex')}@corp.example`, emailVerified: true });
    await account.startLink(BUTTON);
    // The re-authentication: the provider's sign-in page asks the password again, even over its session.
    await page.getByRole('heading', { name: 'Sign in', exact: true, level: 1 }).waitFor();
    await shot('02-reauthenticate');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText(`${BUTTON} is linked: you can sign in with it.`).waitFor();
    expect(new URL(page.url()).search).toBe('');
    await expect(account.linkedSignIns().count()).resolves.toBe(1);
    await shot('03-linked');
    expect(await axeOf(page)).toEqual([]);
    const linked = await call('GET', `/api/v1/users/${user.json.id}/identities`, { token });
    expect(linked.json.items).toEqual([expect.objectContaining({ provider: NAME, issuer: op.issuer })]);
    // The administrator sees it on the user's page (a browser of their own).
    const adminBrowser = await launchProfile('console-federation-admin-');
    try {
      const adminPage = adminBrowser.context.pages()[0] ?? (await adminBrowser.context.newPage());
      adminPage.setDefaultTimeout(15_000);
      const adminApp = new ConsoleApp(adminPage, base, OUT);
      await adminApp.open();
      await new SignInPage(adminApp).signIn(ADMIN.email, ADMIN.password);
      await adminPage.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      await adminApp.goDirect(`/users/${user.json.id as string}`);
      await adminPage.getByRole('heading', { name: 'Edit user', level: 1 }).waitFor();
      const theirs = adminPage.getByRole('region', { name: 'Other sign-ins' });
      await theirs.getByRole('row').filter({ hasText: BUTTON }).waitFor();
      await adminPage.screenshot({ path: join(OUT, '03b-admin-user-page.png'), fullPage: true });
      expect(adminBrowser.cspViolations).toEqual([]);
    } finally {
      await adminBrowser.context.close();
      rmSync(adminBrowser.userDataDir, { recursive: true, force: true });
    }

    // 4. Unlinked (the password stays a way in).
    await account.unlink(BUTTON);
    await account.section('Other sign-ins').getByText('No other sign-in is linked to your account.').waitFor();
    await shot('04-unlinked');
    expect((await call('GET', `/api/v1/users/${user.json.id}/identities`, { token })).json.items).toEqual([]);
    const trail = await eventually(async () => {
      const items = (await call('GET', `/api/v1/audit-events?targetId=${user.json.id}`, { token })).json.items as Array<{ action: string }>;
      return items.some((i) => i.action === 'identity.unlinked') ? items : undefined;
    }, 10_000, 100);
    expect(trail.map((i) => i.action)).toEqual(expect.arrayContaining(['identity.linked', 'identity.unlinked']));
    expect(cspViolations).toEqual([]);
  });
});

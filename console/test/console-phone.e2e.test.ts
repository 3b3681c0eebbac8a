/**
 * The admin console at a phone's width and under its real CSP, in a real browser (Debian's
 * Chromium driven by playwright-core): every page at 390 px (nothing wider than the viewport, the
 * nav whole, wide tables scrolling in their region), for the administrator and for a user without
 * permissions; then the console's sign-in page and GraphiQL (GRAPHQL_IDE=true) under their real
 * CSP with the network to anything but the gateway cut. Against the system console.e2e.test.ts
 * uses (started here, or CONSOLE_TEST_BASE_URL with ADMIN_EMAIL / ADMIN_PASSWORD). Screenshots:
 * console/test-output/phone/ (gitignored). Skipped, saying why, without /usr/bin/chromium or a
 * built console.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { ADMIN, type TestSystem, startTestSystem } from '../../deploy/all-in-one/test/harness';
import { browserTestsRunnable } from '@iam/platform/testing';
import { CHROMIUM, CHROMIUM_ARGS, launchProfile } from './browser';
import { freePort } from './support';
import { ConsoleApp, SignInPage, UsersPage } from './pages';

const DIST = join(__dirname, '..', 'dist', 'index.html');
const OUT = join(__dirname, '..', 'test-output', 'phone');
const suite = browserTestsRunnable(__filename, { paths: [DIST], fix: 'make build' }) ? describe : describe.skip;
const EXTERNAL = process.env.CONSOLE_TEST_BASE_URL;
const admin = EXTERNAL ? { email: process.env.ADMIN_EMAIL ?? ADMIN.email, password: process.env.ADMIN_PASSWORD ?? ADMIN.password } : ADMIN;
const run = Date.now().toString(36);
/** A user without permissions (created through the API for this run). */
const NOBODY = `nobody.phone.${run}@example.com`;
const NOBODY_PASSWORD = 'Nobody-Passw0rd!2026';
/** A phone's viewport (the 390 px). */
const PHONE = { width: 390, height: 844 };

suite('admin console on a phone and under its CSP, in Chromium', () => {
  let system: TestSystem | undefined;
  let context: BrowserContext;
  let app: ConsoleApp;
  let userDataDir: string;

  beforeAll(async () => {
    // GraphiQL on (GRAPHQL_IDE), as .ci/run starts its gateway. The console signs in through the
    // OpenID provider: it is opened at PUBLIC_URL, so the port is chosen first.
    if (!EXTERNAL) {
      const port = await freePort();
      system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, GATEWAY_PROFILES: 'full,edge', GRAPHQL_IDE: 'true' } });
    }
    const base = EXTERNAL ?? system!.url();
    const post = async (path: string, body: unknown, token?: string) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    const { token } = (await (await post('/api/v1/auth/generate-jwt', admin)).json()) as { token: string };
    const created = await post('/api/v1/users', { firstName: 'No', lastName: 'Body', email: NOBODY, password: NOBODY_PASSWORD, roles: [] }, token);
    expect(created.status).toBe(201);
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    ({ context, userDataDir } = await launchProfile('console-phone-chromium-'));
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
    app = new ConsoleApp(page, base, OUT);
  }, 120_000);

  afterAll(async () => {
    await app?.screenshot('last').catch(() => undefined);
    await context?.close();
    await system?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  }, 60_000);

  async function expectAccessible(name: string): Promise<void> {
    await app.screenshot(name);
    expect({ page: name, violations: await app.axe() }).toEqual({ page: name, violations: [] });
  }

  it('every page fits a 390 px phone: the header spans it, every section stays in the nav, wide tables scroll inside their region', async () => {
    const page = app.page;
    await page.setViewportSize(PHONE);
    await app.open();
    await page.getByRole('heading', { name: 'Sign in to the IAM console' }).waitFor();
    const fits = async (name: string) => {
      const width = await app.layoutWidth();
      await expectAccessible(`phone-${name}`);
      expect({ page: name, width, fits: width <= PHONE.width }).toEqual({ page: name, width, fits: true });
      // The header (signed in) spans the viewport (less a scroll bar, if the browser shows one).
      if ((await page.locator('header').count()) === 0) return;
      const header = (await page.locator('header').boundingBox())!;
      const inner = await page.evaluate(() => document.documentElement.clientWidth);
      expect({ page: name, header: Math.round(header.width) }).toEqual({ page: name, header: inner });
    };
    await fits('sign-in');
    await new SignInPage(app).signIn(admin.email, admin.password);
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    // Every section is in the nav and inside the viewport ("My account" included).
    expect(await app.sections()).toEqual(['Users', 'Roles', 'Permissions', 'Products', 'Clients', 'Identity providers', 'Webhooks', 'Organizations', 'Audit', 'My account']);
    for (const link of await page.getByRole('navigation', { name: 'Main' }).getByRole('link').all()) {
      const box = (await link.boundingBox())!;
      expect({ link: await link.textContent(), inside: box.x >= 0 && box.x + box.width <= PHONE.width }).toEqual({ link: await link.textContent(), inside: true });
    }
    const users = new UsersPage(app);
    await users.search(admin.email);
    await users.row(admin.email).waitFor();
    await fits('users');
    await users.row(admin.email).getByRole('link').click();
    await page.getByRole('heading', { name: 'Edit user', level: 1 }).waitFor();
    await page.getByRole('checkbox', { name: 'Administrator', exact: true }).waitFor();
    await fits('user-edit');
    await app.goDirect('/users/new');
    await page.getByRole('heading', { name: 'Create user', level: 1 }).waitFor();
    await fits('user-create');
    await app.go('Roles');
    await page.getByLabel('Search roles').fill('Administrator');
    await page.getByRole('link', { name: 'Administrator', exact: true }).click();
    await page.getByRole('heading', { name: 'Role Administrator', level: 1 }).waitFor();
    await page.getByLabel('Permission', { exact: true }).waitFor();
    await fits('role');
    for (const section of ['Roles', 'Permissions', 'Products', 'Clients', 'Identity providers', 'Webhooks', 'Organizations', 'Audit'] as const) {
      await app.go(section);
      await page.getByRole('table').waitFor();
      await fits(section.toLowerCase());
    }
    await app.go('My account');
    await page.locator('dl.claims').filter({ hasText: 'Member since' }).waitFor();
    await fits('me');
    // A wide table scrolls inside its region, reachable by keyboard.
    await app.go('Audit');
    const region = page.getByRole('region', { name: 'Audit events' });
    await region.waitFor();
    expect(await region.evaluate((el) => ({ scrolls: el.scrollWidth > el.clientWidth, tabIndex: el.tabIndex }))).toEqual({ scrolls: true, tabIndex: 0 });
    await region.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
    expect(await app.layoutWidth()).toBeLessThanOrEqual(PHONE.width);
    await app.screenshot('phone-audit-scrolled');
    // The caller without permissions: the nav is short, My account is in it.
    await app.signOut();
    await new SignInPage(app).signIn(NOBODY, NOBODY_PASSWORD);
    await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor();
    expect(await app.sections()).toEqual(['Products', 'Organizations', 'My account']);
    await app.goDirect('/users');
    await app.alert().filter({ hasText: 'This page needs the users.manage permission' }).waitFor();
    await fits('users-forbidden');
    await app.signOut();
    await page.setViewportSize({ width: 1200, height: 800 });
  }, 120_000);

  it('GraphiQL and the console work offline under their own CSP: nothing but the gateway is asked for, no CSP violation, the favicon served', async () => {
    const base = EXTERNAL ?? system!.url();
    const origin = new URL(base).origin;
    // Its own browser (CSP enforced, as in every walk), every request to another origin aborted.
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const ctx = await browser.newContext({ viewport: { width: 1200, height: 800 } });
      const elsewhere: string[] = [];
      await ctx.route('**/*', (r) => (new URL(r.request().url()).origin === origin ? r.continue() : (elsewhere.push(r.request().url()), r.abort())));
      const page = await ctx.newPage();
      page.setDefaultTimeout(20_000);
      const problems: string[] = [];
      const failed: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('response', (r) => {
        // Introspection without a token is refused by the API (GRAPHQL_INTROSPECTION=authenticated): not a page fault.
        if (r.status() >= 400 && !r.url().endsWith('/api/v1/graphql')) failed.push(`${r.status()} ${r.url()}`);
      });

      // The console: its favicon, as an SVG, from the bundle.
      const favicon = page.waitForResponse((r) => /\/console\/assets\/favicon-[\w-]+\.svg$/.test(r.url()));
      await page.goto(`${base}/console`);
      await page.getByRole('heading', { name: 'Sign in to the IAM console' }).waitFor();
      const icon = await favicon;
      expect({ status: icon.status(), type: icon.headers()['content-type'] }).toEqual({ status: 200, type: expect.stringMatching(/^image\/svg\+xml/) as string });

      // GraphiQL, a query run.
      const query = '{ products(pageSize: 2) { products { sku name } nextPageToken } }';
      await page.goto(`${base}/graphiql?query=${encodeURIComponent(query)}`);
      // The editor (Monaco, its workers bundled) holds the document before it is run.
      await page.locator('.graphiql-query-editor').filter({ hasText: 'nextPageToken' }).waitFor();
      await page.getByRole('button', { name: /Execute query/ }).click();
      const answer = page.locator('.graphiql-response');
      await answer.filter({ hasText: '"data"' }).waitFor();
      expect(await answer.textContent()).toMatch(/"products":\s*\{\s*"products":/);
      await shot(page, 'graphiql');
      expect({ elsewhere, problems, failed }).toEqual({ elsewhere: [], problems: [], failed: [] });
    } finally {
      await browser.close();
    }
  }, 120_000);

  async function shot(page: Page, name: string): Promise<void> {
    const path = join(OUT, `${String(app.shots.length + 1).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path });
    app.shots.push(path);
  }
});

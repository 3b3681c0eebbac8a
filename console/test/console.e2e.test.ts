/**
 * The admin console in a real browser (Debian's Chromium driven by playwright-core). By default
 * against the whole system started in this process (`make test`); with CONSOLE_TEST_BASE_URL set,
 * against a running system (`.ci/run` after the kit), signing in as ADMIN_EMAIL / ADMIN_PASSWORD;
 * that system's identity must issue short tokens (JWT_EXPIRY=30) for the refresh check. The
 * gateway serves the built console (console/dist, `make build`). Skipped, saying why, when
 * /usr/bin/chromium or the build is missing. Screenshots: console/test-output/ (gitignored).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { ADMIN, type TestSystem, startTestSystem } from '../../deploy/all-in-one/test/harness';
import { AuditTrailPage, ConsoleApp, ProductsPage, RolesPage, SignInPage, UsersPage } from './pages';

const CHROMIUM = '/usr/bin/chromium';
const DIST = join(__dirname, '..', 'dist', 'index.html');
const OUT = join(__dirname, '..', 'test-output');
const missing = !existsSync(CHROMIUM) ? `${CHROMIUM} is missing (apt-get install -y chromium)` : !existsSync(DIST) ? 'console/dist is not built (make build)' : '';
if (missing) console.warn(`console browser test skipped: ${missing}`);
const suite = missing ? describe.skip : describe;
const EXTERNAL = process.env.CONSOLE_TEST_BASE_URL;
const admin = EXTERNAL ? { email: process.env.ADMIN_EMAIL ?? ADMIN.email, password: process.env.ADMIN_PASSWORD ?? ADMIN.password } : ADMIN;
// Names of this run (a running system may hold earlier runs' records).
const run = Date.now().toString(36);
const ROLE = `Support ${run}`;
const ADA = `ada.${run}@example.com`;
const NOBODY = `nobody.${run}@example.com`;

suite('admin console in Chromium', () => {
  let system: TestSystem | undefined;
  let context: BrowserContext;
  let app: ConsoleApp;
  let userDataDir: string;
  const refreshes: number[] = [];

  beforeAll(async () => {
    // 30 s tokens (the minimum): the console must refresh during the walk, unnoticed.
    if (!EXTERNAL) system = await startTestSystem({ env: { JWT_EXPIRY: '30', GATEWAY_PROFILES: 'full,edge' } });
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    userDataDir = mkdtempSync(join(tmpdir(), 'console-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport: { width: 1200, height: 800 },
      // axe-core is evaluated into the page; the console's CSP allows only its own scripts.
      bypassCSP: true,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
    page.on('response', (r) => {
      if (r.url().endsWith('/api/v1/auth/refresh')) refreshes.push(r.status());
    });
    app = new ConsoleApp(page, EXTERNAL ?? system!.url(), OUT);
  }, 120_000);

  afterAll(async () => {
    // The last page as it was (after a failure: where the walk stopped).
    await app?.screenshot('last').catch(() => undefined);
    await context?.close();
    await system?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function expectAccessible(name: string): Promise<void> {
    await app.screenshot(name);
    expect({ page: name, violations: await app.axe() }).toEqual({ page: name, violations: [] });
  }

  it('walks sign-in, users, roles and their permissions, my account, and a caller without permissions', async () => {
    const page = app.page;
    const started = Date.now();
    await app.open();
    await expect(app.heading().textContent()).resolves.toBe('Sign in to the IAM console');
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return { domInteractive: Math.round(nav.domInteractive), loadEventEnd: Math.round(nav.loadEventEnd) };
    });
    console.log(`console first page: domInteractive ${timing.domInteractive} ms, load ${timing.loadEventEnd} ms, heading after ${Date.now() - started} ms`);
    expect(timing.domInteractive).toBeLessThan(1_000);
    await expectAccessible('sign-in');

    // A wrong password: the generic message.
    const signIn = new SignInPage(app);
    await signIn.signIn(admin.email, 'not-the-password');
    await expect(app.alert().textContent()).resolves.toContain('The email or password is not correct');

    await signIn.signIn(admin.email, admin.password);
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    const users = new UsersPage(app);
    await users.search(admin.email);
    await users.row(admin.email).waitFor();
    await expectAccessible('users');

    // A role, granted a permission from its page (and a revoke round trip).
    const roles = new RolesPage(app);
    await app.go('Roles');
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    await roles.create(ROLE);
    await roles.search(ROLE);
    await page.getByRole('link', { name: ROLE, exact: true }).waitFor();
    await expectAccessible('roles');
    await roles.open(ROLE);
    await page.getByRole('heading', { name: `Role ${ROLE}` }).waitFor();
    await roles.grant('permissions.manage');
    await roles.granted().filter({ hasText: 'permissions.manage' }).waitFor();
    await roles.grant('roles.manage');
    await roles.granted().filter({ hasText: 'roles.manage' }).waitFor();
    await expectAccessible('role');
    await roles.revoke('roles.manage');
    await roles.granted().filter({ hasText: 'roles.manage' }).waitFor({ state: 'detached' });
    expect(await roles.granted().allTextContents()).toEqual([expect.stringContaining('permissions.manage')]);

    // A user with that role: create, find, edit, password reset, delete, show deleted.
    await app.go('Users');
    await users.create({ firstName: 'Ada', lastName: 'Lovelace', email: ADA, password: 'Ada-Passw0rd!2026', roles: [ROLE] });
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await users.search(ADA);
    await users.row(ADA).filter({ hasText: ROLE }).waitFor();
    // A field error beside its field (the API's problem+json, body.email → the Email field).
    await users.create({ firstName: 'Bad', lastName: 'Email', email: 'x@', password: 'Bad-Passw0rd!2026', roles: [] });
    await page.locator('.field-error').first().waitFor();
    await expectAccessible('user-create-field-error');
    await app.go('Users');
    await users.search(ADA);
    await users.edit(ADA, { lastName: 'King' });
    await app.status().filter({ hasText: 'Saved.' }).waitFor();
    await expectAccessible('user-edit');
    await app.go('Users');
    await users.search(ADA);
    await users.row('Ada King').waitFor();
    await users.resetPassword(ADA);
    await app.status().filter({ hasText: 'Password-reset mail requested.' }).waitFor();
    await users.remove(ADA);
    await users.row(ADA).waitFor({ state: 'detached' });
    await users.showDeleted(true);
    await users.row(ADA).filter({ hasText: 'Deleted' }).waitFor();

    await app.go('Permissions');
    await page.getByRole('cell', { name: 'users.manage', exact: true }).waitFor();
    await expectAccessible('permissions');
    // The catalog (the edge GraphQL API): create (a field error first), rename, stock, archive.
    const catalog = new ProductsPage(app);
    const SKU = `CONSOLE-${run.toUpperCase()}`;
    await app.go('Products');
    await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor();
    await catalog.create({ sku: SKU, name: 'Console mug', priceMinor: '12.5', currency: 'EUR', onHand: '5' });
    await page.locator('.field-error').filter({ hasText: 'whole number' }).waitFor();
    await page.getByLabel('Price in minor units').fill('1250');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Product Console mug' }).waitFor();
    await catalog.rename('Console cup');
    await app.status().filter({ hasText: 'Saved.' }).waitFor();
    await catalog.adjustStock('7');
    await page.locator('dl.claims').filter({ hasText: '12 on hand' }).waitFor();
    await expectAccessible('product');
    await catalog.archive(SKU);
    await page.locator('dl.claims').filter({ hasText: 'Archived' }).waitFor();
    await app.go('Products');
    await catalog.search(SKU);
    await catalog.row(SKU).filter({ hasText: 'Archived' }).filter({ hasText: 'Console cup' }).filter({ hasText: '12.50 EUR' }).waitFor();
    await expectAccessible('products');

    // The audit trail: the edit of Ada (who, what changed), and the hash chain verified.
    const trail = new AuditTrailPage(app);
    await app.go('Audit');
    await page.getByRole('heading', { name: 'Audit trail', level: 1 }).waitFor();
    await trail.find('user.updated', 'Lovelace → King');
    await page.getByRole('row').filter({ hasText: 'Lovelace → King' }).filter({ hasText: admin.email }).first().waitFor();
    await trail.verify();
    await app.status().filter({ hasText: 'The chain is intact' }).waitFor();
    await expectAccessible('audit');

    await app.go('My account');
    // The stored record (the administrator holds users.manage), not only the token's claims.
    await page.locator('dl.claims').filter({ hasText: 'Member since' }).filter({ hasText: admin.email }).waitFor();
    await page.getByRole('button', { name: 'Send a verification email' }).click();
    await app.status().filter({ hasText: 'Verification email requested' }).waitFor();
    await expectAccessible('me');

    // The access token (30 s) is refreshed before it expires, without the user noticing.
    if (refreshes.length === 0) await page.waitForResponse((r: { url(): string }) => r.url().endsWith('/api/v1/auth/refresh'), { timeout: 40_000 });
    await app.go('Users');
    await users.search(admin.email);
    await users.row(admin.email).waitFor();
    expect(refreshes.length).toBeGreaterThan(0);
    expect(refreshes.every((s) => s === 200)).toBe(true);

    // Another user, with no permissions at all: no create button, the server's 403 shown.
    await app.go('Users');
    await users.create({ firstName: 'No', lastName: 'Body', email: NOBODY, password: 'Nobody-Passw0rd!2026', roles: [] });
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await app.signOut();
    await page.getByRole('heading', { name: 'Sign in to the IAM console' }).waitFor();
    await signIn.signIn(NOBODY, 'Nobody-Passw0rd!2026');
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await app.alert().filter({ hasText: 'Trace id' }).waitFor();
    expect(await app.alert().filter({ hasText: 'Not allowed' }).count()).toBeGreaterThan(0);
    expect(await users.createButton().count()).toBe(0);
    await expectAccessible('users-forbidden');
    // The catalog is public to read; without products.manage there is nothing to administer.
    await app.go('Products');
    await page.getByRole('heading', { name: 'Products', level: 1 }).waitFor();
    await page.getByRole('table').waitFor();
    expect(await catalog.createButton().count()).toBe(0);
    await app.go('Users');
    // A direct URL within the session: a clear message, not a form.
    await page.evaluate(() => {
      history.pushState(null, '', '/console/users/new');
      dispatchEvent(new PopStateEvent('popstate'));
    });
    await page.getByRole('heading', { name: 'Create user', level: 1 }).waitFor();
    await app.alert().filter({ hasText: 'This page needs the users.manage permission' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create' }).count()).toBe(0);
    // Tokens live in memory only: a reload is a new sign-in.
    await app.open('/users');
    await expect(app.heading().textContent()).resolves.toBe('Sign in to the IAM console');
  }, 180_000);
});

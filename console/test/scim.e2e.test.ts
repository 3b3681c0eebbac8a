/**
 * SCIM connections in the console (issue #42), in a real browser (Debian's Chromium, CSP
 * enforced): an organization's admin (org.admin, no platform permission) signs in, makes a SCIM
 * connection on the organization's page, copies the token and base URL shown once; an
 * Entra-style client provisions a user with them; revoking the connection in the console stops
 * the token. Skipped, saying why, without /usr/bin/chromium or a built console, and against a
 * running system. Screenshots: console/test-output/scim/.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { browserTestsRunnable } from '@iam/platform/testing';
import type { BrowserContext } from 'playwright-core';
import { ADMIN, type TestSystem, http, startTestSystem, strongPassword, uniqueEmail } from '../../deploy/all-in-one/test/harness';
import { launchProfile } from './browser';
import { ConsoleApp, SignInPage } from './pages';
import { freePort } from './support';

const DIST = join(__dirname, '..', 'dist', 'index.html');
const OUT = join(__dirname, '..', 'test-output', 'scim');
const external = process.env.CONSOLE_TEST_BASE_URL;
if (external) console.warn('console SCIM walk skipped: it makes its own organization and admin in a system it starts');
const suite = !external && browserTestsRunnable(__filename, { paths: [DIST], fix: 'make build' }) ? describe : describe.skip;

jest.setTimeout(180_000);

suite('SCIM connections in the console (Chromium)', () => {
  let system: TestSystem;
  let context: BrowserContext;
  let app: ConsoleApp;
  let userDataDir: string;
  let cspViolations: string[];

  beforeAll(async () => {
    const port = await freePort();
    system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` } });
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    ({ context, userDataDir, cspViolations } = await launchProfile('console-scim-'));
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    app = new ConsoleApp(page, system.url(), OUT);
  }, 120_000);

  afterAll(async () => {
    await app?.screenshot('last').catch(() => undefined);
    await context?.close();
    await system?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it("an organization's admin makes a connection, Entra provisions with its token, revoking stops it", async () => {
    const call = (method: string, path: string, opts: Parameters<typeof http>[3] = {}) => http(system.url(), method, path, opts);
    const admin = (await call('POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
    const org = await call('POST', '/api/v1/organizations', { token: admin, body: { name: 'Fabrikam', slug: `fabrikam-${randomUUID().slice(0, 8)}` } });
    const email = uniqueEmail('orgadmin');
    const password = strongPassword();
    const orgAdmin = await call('POST', '/api/v1/users', { token: admin, body: { firstName: 'Fab', lastName: 'Admin', email, password } });
    expect((await call('POST', `/api/v1/organizations/${org.json.id}/members`, { token: admin, body: { userId: orgAdmin.json.id, roles: ['org.admin'] } })).status).toBe(201);

    const page = app.page;
    await app.open();
    await new SignInPage(app).signIn(email, password);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await app.go('Organizations');
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Fabrikam' }).click();
    await page.getByRole('heading', { name: 'SCIM connections', level: 2 }).waitFor();
    await page.getByLabel('Connection name (e.g. Entra ID)').fill('Entra ID');
    await page.getByRole('button', { name: 'Create SCIM connection' }).click();
    await page.getByText('Copy the token now: it is not shown again.').waitFor();
    const token = (await page.getByTestId('scim-token').textContent())!;
    const baseUrl = (await page.locator('dd code').first().textContent())!;
    expect(baseUrl).toBe(`${system.url()}/scim/v2/${org.json.id}`);
    await app.screenshot('connection-made');

    // Entra's first create, with what the page showed.
    const created = await fetch(`${baseUrl}/Users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `Test_User_${randomUUID()}`, emails: [{ primary: true, type: 'work', value: uniqueEmail('entra') }], name: { givenName: 'Test', familyName: 'User' } }),
    });
    expect(created.status).toBe(201);

    await page.getByRole('button', { name: 'I have copied the token' }).click();
    await page.getByTestId('scim-token').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Revoke Entra ID' }).click();
    await page.getByRole('button', { name: 'Confirm revoking Entra ID' }).click();
    await page.getByRole('list', { name: 'SCIM connections' }).getByText(/Entra ID: revoked/).waitFor();
    await app.screenshot('connection-revoked');
    expect((await fetch(`${baseUrl}/Users`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect(cspViolations).toEqual([]);
    expect(await app.axe()).toEqual([]);
  });
});

/**
 * The console's Webhooks page in a real browser (Debian's Chromium driven by playwright-core),
 * against the whole system started in this process with a real receiver on loopback
 * (WEBHOOK_ALLOW_PRIVATE=true: test only): register an endpoint (its secret shown once), see it
 * listed, open it, send a test message and see its attempt (status, latency, the first bytes of
 * the answer), replay it (the same webhook-id arrives again), replay the dead letters of a range,
 * rotate the secret; axe-core on each page. Skipped, saying why, without /usr/bin/chromium or a
 * built console, and against a running system (CONSOLE_TEST_BASE_URL: its notification refuses
 * loopback receivers, as production must). Screenshots: console/test-output/webhooks/.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type WebhookReceiver, eventually, startWebhookReceiver } from '@iam/platform/testing';
import type { BrowserContext } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { ADMIN, type TestSystem, startTestSystem } from '../../deploy/all-in-one/test/harness';
import { browserTestsRunnable } from '@iam/platform/testing';
import { launchProfile } from './browser';
import { ConsoleApp, SignInPage } from './pages';
import { freePort } from './support';
import { WebhooksPage } from './webhooks-page';

const DIST = join(__dirname, '..', 'dist', 'index.html');
const OUT = join(__dirname, '..', 'test-output', 'webhooks');
// Against an external system it cannot run (that system's notification refuses loopback
// receivers); without Chromium or a build it records its skip for the run's summary.
const external = process.env.CONSOLE_TEST_BASE_URL;
if (external) console.warn('console webhooks walk skipped: it needs a system whose notification accepts loopback receivers (it runs in make test)');
const suite = !external && browserTestsRunnable(__filename, { paths: [DIST], fix: 'make build' }) ? describe : describe.skip;

jest.setTimeout(180_000);

suite('the console\'s Webhooks page in Chromium', () => {
  let system: TestSystem;
  let receiver: WebhookReceiver;
  let context: BrowserContext;
  let app: ConsoleApp;
  let userDataDir: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver((r) => (r.path === '/dead' ? { status: 500, body: 'nope' } : { status: 200, body: 'received, thank you' }));
    const port = await freePort();
    system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,0.2' } });
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    ({ context, userDataDir } = await launchProfile('console-webhooks-'));
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);
    app = new ConsoleApp(page, system.url(), OUT);
  }, 120_000);

  afterAll(async () => {
    await app?.screenshot('last').catch(() => undefined);
    await context?.close();
    await system?.stop();
    await receiver?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function expectAccessible(name: string): Promise<void> {
    await app.screenshot(name);
    expect({ page: name, violations: await app.axe() }).toEqual({ page: name, violations: [] });
  }

  it('registers an endpoint, sends a test, shows its attempts, replays a message and a range, rotates the secret', async () => {
    await app.open();
    await new SignInPage(app).signIn(ADMIN.email, ADMIN.password);
    await app.page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    const hooks = new WebhooksPage(app);
    await hooks.open();
    await expectAccessible('webhooks');

    // The platform's own host (PUBLIC_URL's, 127.0.0.1 here) is never a target: the receiver by name.
    const url = `${receiver.origin.replace('127.0.0.1', 'localhost')}/crm`;
    const secret = await hooks.register(url, 'CRM', ['user.created', 'user.deleted']);
    expect(secret).toMatch(/^whsec_/);
    await hooks.row(url).waitFor();
    await expect(hooks.row(url).textContent()).resolves.toContain('user.created, user.deleted');
    await expectAccessible('webhooks-registered');

    await hooks.openEndpoint(url);
    const messageId = await hooks.sendTest();
    await eventually(() => receiver.received.some((r) => r.id === messageId), 15_000, 50);
    const first = receiver.received.find((r) => r.id === messageId)!;
    new Webhook(secret).verify(first.body, { 'webhook-id': first.id, 'webhook-timestamp': first.timestamp, 'webhook-signature': first.signature });
    // The attempt: status, latency, the answer's first bytes (the table refreshes itself).
    await hooks.attempt(messageId).filter({ hasText: '200 delivered' }).filter({ hasText: 'received, thank you' }).waitFor();
    await expect(hooks.attempt(messageId).textContent()).resolves.toMatch(/\d+ ms/);
    await expectAccessible('webhook-endpoint');

    await eventually(() => Math.floor(Date.now() / 1000) > Number(first.timestamp), 3_000, 50);
    await hooks.replay(messageId);
    await eventually(() => receiver.received.filter((r) => r.id === messageId).length === 2, 15_000, 50);

    const rotated = await hooks.rotate();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await expectAccessible('webhook-rotated');
  });

  it('a failing endpoint: its messages become dead letters, listed, and "Replay failed messages" sends them again', async () => {
    await app.open('/webhooks');
    const hooks = new WebhooksPage(app);
    await app.page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const url = `${receiver.origin.replace('127.0.0.1', 'localhost')}/dead`;
    await hooks.register(url, 'Broken', []);
    await hooks.openEndpoint(url);
    const messageId = await hooks.sendTest();
    await app.page.getByLabel('Show').selectOption('dead');
    await hooks.message(messageId).filter({ hasText: 'dead letter' }).waitFor({ timeout: 30_000 });
    receiver.respond = () => ({ status: 204 });
    await expect(hooks.replayRange()).resolves.toContain('1 dead letter queued again.');
    await eventually(() => receiver.received.filter((r) => r.id === messageId).length === 3, 15_000, 50);
    await expectAccessible('webhook-dead-letters');
  });
});

/**
 * Nothing lost on the way from a reset request to the mail: with NATS stopped while 200 requests
 * are made, every mail arrives once NATS is back, once each; with the notification process stopped
 * (SIGTERM) mid-batch, once each too. Killed (SIGKILL) mid-batch and restarted: delivery is at
 * least once. Every mail arrives; a mail is repeated only if its attempt was 'sending' at the kill
 * (SMTP's own window, RFC 1047: the server may have accepted it), and a repeat carries the same
 * Message-ID as the first copy. Own NATS server and notification process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCommerceConfig } from '@iam/commerce';
import { createDirectoryUseCases, readDirectoryConfig } from '@iam/directory';
import { type RunningGateway, readGatewayConfig } from '@iam/gateway';
import { readIdentityConfig } from '@iam/identity';
import { JetStreamEventBus, Lifecycle, type RunningService, readConfig } from '@iam/platform';
import { type SmtpSink, TEST_CALL_KEY, type TestDatabase, createTestDatabase, eventually, startSmtpSink, testLogger, testMetrics } from '@iam/platform/testing';
import { Client } from 'pg';
import { startSystem } from '../src/system';
import { http, strongPassword } from './harness';
import { freePort, listening, natsBinary, testNatsServer } from './support/nats';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..', '..');
const NOTIFICATION_MAIN = join(ROOT, 'services/notification/dist/main.js');
const runnable = natsBinary && existsSync(NOTIFICATION_MAIN);

(runnable ? describe : describe.skip)('mail pipeline faults (own NATS, notification as its own process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-mail-faults-'));
  const nats = testNatsServer(dir);
  let notificationGrpcPort: number;
  const sealKey = randomBytes(32).toString('base64');
  const lifecycle = new Lifecycle(testLogger(), 5_000);
  const dbs: TestDatabase[] = [];
  let notification: ChildProcess | undefined;
  let smtp: SmtpSink;
  let gateway: RunningGateway;
  let directory: RunningService;
  let notificationDb: TestDatabase;
  const users: string[] = [];

  async function stop(p: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill(signal);
    });
  }
  async function startNotification(): Promise<void> {
    notification = spawn(process.execPath, [NOTIFICATION_MAIN], {
      stdio: 'ignore',
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        NATS_URL: nats.url,
        NOTIFICATION_DATABASE_URL: notificationDb.url,
        MIGRATE_ON_START: 'true', // a fresh database; production runs `migrate` as its own step
        NOTIFICATION_GRPC_PORT: String(notificationGrpcPort),
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        EMAIL_ACTION_BASE_URL: 'https://app.example',
        EMAIL_ACTION_KEY: sealKey,
        WEBHOOK_SECRET_KEY: sealKey,
        INTERNAL_CALL_KEY: TEST_CALL_KEY.toString('base64'),
        // Redelivered 15 s after the kill (ack wait), a 'sending' attempt is still fresh: the event
        // is put off until the attempt is 20 s old, then sent again.
        NOTIFICATION_SENDING_STALE_MS: '20000',
        LOG_LEVEL: 'warn',
      },
    });
    await eventually(() => listening(notificationGrpcPort), 20_000, 100);
  }
  const resetMails = (email: string, after = 0) => smtp.mails.slice(after).filter((m) => m.to.includes(email) && m.subject === 'Reset your password');

  beforeAll(async () => {
    smtp = await startSmtpSink();
    await nats.start();
    notificationGrpcPort = await freePort();
    for (const n of ['directory', 'identity', 'notification', 'commerce']) dbs.push(await createTestDatabase(`faults_${n}`));
    notificationDb = dbs[2]!;
    const logger = testLogger();
    const metrics = testMetrics();
    const bus = new JetStreamEventBus({ url: nats.url, name: 'faults-test', logger, metrics });
    lifecycle.onShutdown('bus', () => bus.close());
    const env = {
      HOST: '127.0.0.1',
      PORT: '0',
      DIRECTORY_GRPC_PORT: '0',
      IDENTITY_GRPC_PORT: '0',
      COMMERCE_GRPC_PORT: '0',
      ARGON2_MEMORY_KIB: '8192',
      ARGON2_ITERATIONS: '1',
      GATEWAY_PROFILES: 'full',
      JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OIDC_COOKIE_KEY: randomBytes(32).toString('base64'),
      IDENTITY_OP_PORT: '0',
      EMAIL_ACTION_KEY: sealKey,
      WEBHOOK_SECRET_KEY: sealKey,
      EMAIL_ACTION_MAX_PER_HOUR: '100',
      RATE_LIMIT_EMAIL_ACTIONS_PER_MINUTE: '1000000',
      RATE_LIMIT_EMAIL_ACTIONS_BURST: '1000000',
    };
    const config = readConfig(env, (e) => ({
      gateway: readGatewayConfig(e),
      directory: readDirectoryConfig(e, { databaseUrl: dbs[0]!.url }),
      identity: readIdentityConfig(e, { databaseUrl: dbs[1]!.url }),
      commerce: readCommerceConfig(e, { databaseUrl: dbs[3]!.url }),
    }));
    // Notification runs as its own process here, so that it can be killed and restarted.
    await startNotification();
    const system = await startSystem({
      config,
      logger,
      bus,
      lifecycle,
      gatewayMetrics: metrics,
      serviceMetrics: () => metrics,
      external: { notification: `127.0.0.1:${notificationGrpcPort}` },
      callKey: TEST_CALL_KEY,
    });
    directory = system.services.directory!;
    gateway = system.gateways[0]!;
    const uc = createDirectoryUseCases(directory.dataSource, config.directory);
    // Plain users without roles: a caller with no rights at all may create those.
    const nobody = { userId: randomUUID() };
    for (let i = 0; i < 200; i++) {
      const u = await uc.users.create(nobody, { firstName: 'F', lastName: `L${i}`, email: `fault-${i}-${randomBytes(3).toString('hex')}@example.com`, password: strongPassword() });
      users.push(u.email);
    }
    await eventually(async () => (await gateway.health.refresh()).ready, 20_000, 200);
  });

  afterAll(async () => {
    await stop(notification, 'SIGTERM');
    await lifecycle.shutdown('test done');
    await nats.stop('SIGTERM');
    await smtp?.close();
    for (const db of dbs) await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function requestAll(): Promise<void> {
    const base = `http://127.0.0.1:${gateway.port}`;
    for (let i = 0; i < users.length; i += 10) {
      const batch = await Promise.all(users.slice(i, i + 10).map((email) => http(base, 'POST', '/api/v1/auth/password-reset/request', { body: { email } })));
      expect(batch.map((r) => r.status)).toEqual(batch.map(() => 202));
    }
  }

  it('NATS stopped while 200 resets are requested: all 200 mails arrive once it is back, once each', async () => {
    await nats.stop('SIGKILL');
    const mark = smtp.mails.length;
    await requestAll();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(smtp.mails.length).toBe(mark);
    await nats.start();
    await eventually(() => users.every((u) => resetMails(u, mark).length >= 1), 90_000, 250);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(users.map((u) => resetMails(u, mark).length)).toEqual(users.map(() => 1));
  });

  it('notification stopped (SIGTERM) mid-batch and restarted: every mail once (running attempts finish first)', async () => {
    const mark = smtp.mails.length;
    smtp.behave({ delayMs: 5 });
    await requestAll();
    await eventually(() => smtp.mails.length - mark >= 40, 60_000, 5);
    await stop(notification, 'SIGTERM');
    await startNotification();
    await eventually(() => users.every((u) => resetMails(u, mark).length >= 1), 90_000, 250);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(users.map((u) => resetMails(u, mark).length)).toEqual(users.map(() => 1));
  });

  it("notification killed (SIGKILL) mid-batch and restarted: every mail at least once; only attempts 'sending' at the kill repeat, with the same Message-ID", async () => {
    const mark = smtp.mails.length;
    // The sink keeps each mail and answers 250 only 100 ms after the data: a process killed in
    // between has had its mail accepted without learning it (the window of RFC 1047).
    smtp.behave({ delayMs: 100 });
    const since = new Date();
    await requestAll();
    // Killed while mails are on their way (some answers held back), not in a lull between batches.
    await eventually(() => smtp.mails.length - mark >= 40 && smtp.answering() >= 2, 60_000, 2);
    await stop(notification, 'SIGKILL');
    const killedAt = Date.now();
    const c = new Client({ connectionString: notificationDb.url });
    c.on('error', () => undefined); // dropped with the database if an assertion below fails first
    await c.connect();
    // A COMMIT the process sent just before the kill may still be applied: read what was in flight
    // once every session of the killed process has ended (nothing else uses this database now).
    await eventually(async () => Number((await c.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows[0].n) === 0, 10_000, 20);
    const sending = async () => new Set(((await c.query(`SELECT recipient FROM deliveries WHERE status = 'sending'`)).rows as Array<{ recipient: string }>).map((r) => r.recipient));
    const inFlight = await sending();
    expect(inFlight.size).toBeGreaterThan(0);
    await startNotification();
    await eventually(() => users.every((u) => resetMails(u, mark).length >= 1), 90_000, 250);
    // Every attempt left in 'sending' is settled (redelivered, put off while fresh, then sent).
    await eventually(async () => (await sending()).size === 0, 60_000, 100);
    // Redelivered after the ack wait (15 s), those attempts were younger than the 20 s limit: put
    // off, not sent again until they were stale.
    const settledMs = Date.now() - killedAt;
    expect(settledMs).toBeGreaterThan(18_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const unsent = (await c.query(`SELECT event_id, status FROM deliveries WHERE status <> 'sent'`)).rows as unknown[];
    expect(unsent).toEqual([]);
    const repeated = users.filter((u) => resetMails(u, mark).length > 1);
    for (const u of repeated) {
      expect(inFlight.has(u)).toBe(true);
      // A repeat is the same mail: receivers can drop it by its Message-ID.
      expect(new Set(resetMails(u, mark).map((m) => m.messageId))).toEqual(new Set([resetMails(u, mark)[0]!.messageId]));
    }
    expect(users.every((u) => resetMails(u, mark).length <= 2)).toBe(true);
    // An attempt found 'sending' was taken over once, after it was stale: never two at a time.
    const attempts = (await c.query(`SELECT recipient, attempts FROM deliveries WHERE recipient = ANY($1) AND created_at >= $2`, [[...inFlight], since])).rows as Array<{ recipient: string; attempts: number }>;
    expect(attempts).toHaveLength(inFlight.size);
    expect(attempts.map((r) => r.attempts)).toEqual(attempts.map(() => 2));
    // One Message-ID per event: the mails of different requests never share one.
    expect(new Set(users.map((u) => resetMails(u, mark)[0]!.messageId)).size).toBe(users.length);
    await c.end();
    smtp.behave({ delayMs: 0 });
    process.stdout.write(`[mail-faults] killed with ${inFlight.size} attempt(s) 'sending'; ${repeated.length} mail(s) repeated, each with its first copy's Message-ID; settled ${settledMs} ms after the kill\n`);
  });
});

/**
 * A NATS outage never makes anything unready (issue #13): with the system's own nats-server
 * stopped, the gateway's and every service's /health/ready stay 200, writes still succeed, their
 * events wait in the outbox (backlog and age grow, `nats_connected` 0, `nats: down` in
 * /api/v1/health), and after NATS returns the outbox drains by itself, within a second (issue
 * #26: the bus's reconnect wakes the relay). Real PostgreSQL, an own NATS server on its own port,
 * the gateway's ops port (GATEWAY_OPS_PORT) for the named detail.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCommerceConfig } from '@iam/commerce';
import { readDirectoryConfig } from '@iam/directory';
import { type RunningGateway, readGatewayConfig } from '@iam/gateway';
import { readIdentityConfig } from '@iam/identity';
import { readNotificationConfig } from '@iam/notification';
import { JetStreamEventBus, Lifecycle, type Metrics, type RunningService, createMetrics, readConfig } from '@iam/platform';
import { type TestDatabase, createTestDatabase, eventually, testLogger } from '@iam/platform/testing';
import { Client } from 'pg';
import { SERVICES, type ServiceName, startSystem } from '../src/system';
import { freePort, natsBinary, testNatsServer } from './support/nats';

jest.setTimeout(120_000);

const ADMIN = { email: 'admin@example.com', password: 'Admin-Passw0rd!' };
/** Writes made during the outage: as many events wait in the directory's outbox. */
const WRITES = 300;

(natsBinary ? describe : describe.skip)('NATS outage: ready throughout, writes succeed, the outbox buffers and drains', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-nats-outage-'));
  const nats = testNatsServer(dir);
  let opsPort: number;
  const dbs: TestDatabase[] = [];
  const metrics = new Map<ServiceName, Metrics>();
  let lifecycle: Lifecycle;
  let gateway: RunningGateway;
  let services: Partial<Record<ServiceName, RunningService>>;
  let base: string;
  let token: string;
  let reconnectedAt = 0;

  const startNats = () => nats.start();
  const stopNats = () => nats.stop();
  const get = async (url: string) => {
    const r = await fetch(url);
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };
  const createRole = async (name: string): Promise<number> =>
    (
      await fetch(`${base}/api/v1/roles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, description: 'created during a NATS outage' }),
      })
    ).status;
  const gauge = async (m: Metrics, which: 'outboxPending' | 'outboxOldestAge', service: string): Promise<number> =>
    (await m[which].get()).values.find((v) => v.labels.service === service)?.value ?? 0;
  const natsConnected = async (m: Metrics): Promise<number> => (await m.natsConnected.get()).values[0]?.value ?? -1;

  beforeAll(async () => {
    await startNats();
    opsPort = await freePort();
    for (const n of SERVICES) dbs.push(await createTestDatabase(`outage_${n}`));
    const logger = testLogger();
    lifecycle = new Lifecycle(logger, 5_000);
    const bus = new JetStreamEventBus({ url: nats.url, name: 'outage-test', logger });
    bus.onReconnect(() => (reconnectedAt = Date.now()));
    lifecycle.onShutdown('bus', () => bus.close());
    const env = {
      HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_OPS_PORT: String(opsPort),
      GATEWAY_PROFILES: 'full',
      DIRECTORY_GRPC_PORT: '0',
      IDENTITY_GRPC_PORT: '0',
      NOTIFICATION_GRPC_PORT: '0',
      COMMERCE_GRPC_PORT: '0',
      ARGON2_MEMORY_KIB: '8192',
      ARGON2_ITERATIONS: '1',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      OIDC_COOKIE_KEY: randomBytes(32).toString('base64'),
      IDENTITY_OP_PORT: '0',
      EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    };
    const [directory, identity, notification, commerce] = dbs as [TestDatabase, TestDatabase, TestDatabase, TestDatabase];
    const config = readConfig(env, (e) => ({
      gateway: readGatewayConfig(e),
      directory: readDirectoryConfig(e, { databaseUrl: directory.url }),
      identity: readIdentityConfig(e, { databaseUrl: identity.url }),
      notification: readNotificationConfig(e, { databaseUrl: notification.url }),
      commerce: readCommerceConfig(e, { databaseUrl: commerce.url }),
    }));
    const system = await startSystem({
      config,
      logger,
      bus,
      lifecycle,
      admin: ADMIN,
      serviceMetrics: (name) => {
        const m = createMetrics({ defaultMetrics: false });
        metrics.set(name, m);
        return m;
      },
    });
    gateway = system.gateways[0]!;
    services = system.services;
    base = `http://127.0.0.1:${gateway.port}`;
    await eventually(async () => (await get(`${base}/health/ready`)).status === 200, 20_000, 100);
    // Readiness no longer waits for the upstreams (issue #22): wait until the gateway has seen them up.
    await eventually(async () => {
      const checks = (await get(`http://127.0.0.1:${opsPort}/health/ready`)).json.checks as Record<string, string> | undefined;
      return checks?.identity === 'up' && checks.directory === 'up';
    }, 20_000, 100);
    const login = await fetch(`${base}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await login.json()) as { token: string }).token;
  });

  afterAll(async () => {
    await lifecycle?.shutdown('test done');
    await stopNats();
    for (const db of dbs) await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names components only on the ops port; NATS shows as detail', async () => {
    const ready = await get(`${base}/health/ready`);
    expect(ready).toMatchObject({ status: 200, json: { status: 'ready' } });
    expect(ready.json.checks).toBeUndefined();
    const ops = await get(`http://127.0.0.1:${gateway.opsPort}/health/ready`);
    expect(ops).toMatchObject({ status: 200, json: { checks: { jwks: 'up', identity: 'up', directory: 'up', bus: 'up' } } });
    expect((await get(`${base}/api/v1/health`)).json).toMatchObject({ status: 'ok', db: 'up', nats: 'up' });
    expect(await natsConnected(metrics.get('directory')!)).toBe(1);
  });

  it('NATS stopped → still ready, writes succeed, the backlog grows; NATS back → it drains within a second', async () => {
    const directoryMetrics = metrics.get('directory')!;
    await eventually(async () => (await gauge(directoryMetrics, 'outboxPending', 'directory')) === 0, 10_000, 100);
    // Readiness sampled every 100 ms from before the stop until the backlog has drained.
    // A sample that is not 200 keeps the ops port's checks, so a failure says which component it was.
    const readiness: number[] = [];
    const unready: unknown[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pub = await get(`${base}/health/ready`);
        const ops = await get(`http://127.0.0.1:${gateway.opsPort}/health/ready`);
        readiness.push(pub.status, ops.status);
        if (pub.status !== 200 || ops.status !== 200) unready.push({ at: Date.now(), public: pub.status, ops: ops.json });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await stopNats();
    await eventually(async () => (await get(`${base}/api/v1/health`)).json.nats === 'down', 10_000, 100);
    const downAt = Date.now();

    const statuses = new Map<number, number>();
    for (let i = 0; i < WRITES; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => createRole(`outage-role-${i + j}`)));
      for (const s of batch) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 201: WRITES });

    // Backlog and age measured by the relay every 2 s; readiness unchanged meanwhile.
    await eventually(async () => (await gauge(directoryMetrics, 'outboxPending', 'directory')) >= WRITES, 10_000, 200);
    await eventually(async () => (await gauge(directoryMetrics, 'outboxOldestAge', 'directory')) > 0, 10_000, 200);
    expect(await natsConnected(directoryMetrics)).toBe(0);
    expect((await get(`${base}/health/ready`)).status).toBe(200);
    const ops = await get(`http://127.0.0.1:${gateway.opsPort}/health/ready`);
    expect(ops).toMatchObject({ status: 200, json: { status: 'ready', checks: { bus: 'down', 'directory.bus': 'down', directory: 'up', identity: 'up' } } });
    expect((await get(`${base}/api/v1/health`))).toMatchObject({ status: 200, json: { status: 'ok', db: 'up', nats: 'down' } });
    for (const s of Object.values(services)) expect(s.health.snapshot()).toMatchObject({ ready: true, checks: { bus: 'down', db: 'up' } });
    const backlog = services.directory!.relay.backlog();
    expect(backlog.pending).toBeGreaterThanOrEqual(WRITES);
    const pendingDuringOutage = await gauge(directoryMetrics, 'outboxPending', 'directory');
    const ageDuringOutage = await gauge(directoryMetrics, 'outboxOldestAge', 'directory');

    // The drain is timed on the outbox table itself (the gauge is sampled only every 2 s).
    const outbox = new Client({ connectionString: dbs[0]!.url });
    await outbox.connect();
    const unpublished = async () => Number((await outbox.query('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL')).rows[0].n);
    expect(await unpublished()).toBeGreaterThanOrEqual(WRITES);
    reconnectedAt = 0;
    await startNats();
    const upAt = Date.now();
    await eventually(async () => (await unpublished()) === 0, 30_000, 10);
    const drainedMs = Date.now() - upAt;
    await outbox.end();
    await eventually(async () => (await gauge(directoryMetrics, 'outboxPending', 'directory')) === 0, 10_000, 200);
    await eventually(async () => (await get(`${base}/api/v1/health`)).json.nats === 'up', 10_000, 100);
    expect(await natsConnected(directoryMetrics)).toBe(1);
    expect(await gauge(directoryMetrics, 'outboxOldestAge', 'directory')).toBe(0);
    sampling = false;
    await sampler;
    expect(unready).toEqual([]);
    expect(readiness.filter((s) => s !== 200)).toEqual([]);
    process.stdout.write(
      `NATS outage of ${upAt - downAt} ms: ${WRITES}/${WRITES} writes 201, readiness 200 in all ${readiness.length} samples; directory outbox backlog ${pendingDuringOutage} events, oldest ${ageDuringOutage} s; reconnected after ${reconnectedAt - upAt} ms, drained ${drainedMs} ms after NATS returned\n`,
    );
    // The relay is woken by the bus's reconnect (not left in its retry backoff of up to 5 s) and the
    // bus retries every 250 ms: the 300 events are out within a second of NATS listening again on
    // a machine of its own (0.37-0.73 s measured). Under make test, with another suite on the same
    // two cores, it took up to 1.6 s: the bound below still tells a woken relay from one that
    // waits out its backoff (5.5-6.0 s before the fix).
    expect(drainedMs).toBeLessThan(2_500);
  });
});

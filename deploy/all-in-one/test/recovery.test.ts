/**
 * The system recovers from its dependencies going away, without a restart: with the database
 * stopped, /health/ready and /api/v1/health answer 503 (db down) and come back to 200 when it
 * is started again; likewise for NATS (external mode). Uses its own embedded PostgreSQL and,
 * when the nats-server binary is installed, its own NATS server, so the shared ones are untouched.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCommerceConfig } from '@iam/commerce';
import { readDirectoryConfig } from '@iam/directory';
import { readGatewayConfig, type RunningGateway } from '@iam/gateway';
import { readIdentityConfig } from '@iam/identity';
import { readNotificationConfig } from '@iam/notification';
import { type EventBus, InMemoryEventBus, JetStreamEventBus, Lifecycle, readConfig } from '@iam/platform';
import { eventually, testLogger, testMetrics } from '@iam/platform/testing';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/embedded-postgres';
import { startSystem } from '../src/system';

jest.setTimeout(120_000);

const natsBinary = ['/usr/sbin/nats-server', '/usr/local/bin/nats-server', '/usr/bin/nats-server'].find(
  (p) => spawnSync(p, ['--version']).status === 0,
);

function freePort(): number {
  return 40_000 + Math.floor(Math.random() * 20_000);
}

function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  return eventually(
    () =>
      new Promise<boolean>((resolve) => {
        const s = connect({ host: '127.0.0.1', port }, () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      }),
    timeoutMs,
    100,
  ).then(() => undefined);
}

describe('readiness follows the database and NATS, and recovers without a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-recovery-'));
  chmodSync(dir, 0o755); // the embedded server may run as another OS user (when tests run as root)
  const pgPort = freePort();
  const natsPort = freePort();
  let pg: EmbeddedPostgresHandle;
  let nats: ChildProcess | undefined;
  let lifecycle: Lifecycle;
  let gateway: RunningGateway;

  const startNats = async (): Promise<void> => {
    nats = spawn(natsBinary!, ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', join(dir, 'nats')], { stdio: 'ignore' });
    await waitForPort(natsPort);
  };
  const stopNats = async (): Promise<void> => {
    const p = nats;
    nats = undefined;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGTERM');
    });
  };

  const ready = async () => {
    const r = await gateway.app.inject({ url: '/health/ready' });
    const legacy = await gateway.app.inject({ url: '/api/v1/health' });
    return { status: r.statusCode, legacy: legacy.statusCode, db: legacy.json().db as string };
  };

  beforeAll(async () => {
    pg = await startEmbeddedPostgres({ dir: join(dir, 'pg'), port: pgPort });
    if (natsBinary) await startNats();
    const logger = testLogger();
    const metrics = testMetrics();
    lifecycle = new Lifecycle(logger, 5_000);
    const bus: EventBus = natsBinary
      ? new JetStreamEventBus({ url: `nats://127.0.0.1:${natsPort}`, name: 'recovery-test', logger, metrics })
      : new InMemoryEventBus({ logger, metrics });
    lifecycle.onShutdown('bus', () => bus.close());
    const env = {
      JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
      GATEWAY_PROFILES: 'full', // the Full profile's /api/v1/health names the database (Minimal's does not)
      PORT: '0',
      HOST: '127.0.0.1',
      DIRECTORY_GRPC_PORT: '0',
      IDENTITY_GRPC_PORT: '0',
      NOTIFICATION_GRPC_PORT: '0',
      COMMERCE_GRPC_PORT: '0',
    };
    const config = readConfig(env, (e) => ({
      gateway: readGatewayConfig(e),
      directory: readDirectoryConfig(e, { databaseUrl: pg.url('directory') }),
      identity: readIdentityConfig(e, { databaseUrl: pg.url('identity') }),
      notification: readNotificationConfig(e, { databaseUrl: pg.url('notification') }),
      commerce: readCommerceConfig(e, { databaseUrl: pg.url('commerce') }),
    }));
    const system = await startSystem({ config, logger, bus, lifecycle, gatewayMetrics: metrics, serviceMetrics: () => metrics });
    gateway = system.gateways[0]!;
  });

  afterAll(async () => {
    await lifecycle?.shutdown('test done');
    await stopNats();
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is ready once everything is up', async () => {
    await eventually(async () => (await ready()).status === 200, 15_000, 200);
    expect(await ready()).toEqual({ status: 200, legacy: 200, db: 'up' });
  });

  it('database stopped → 503 with db down; started again → 200, no restart', async () => {
    await pg.stop();
    await eventually(async () => (await ready()).status === 503, 10_000, 200);
    expect(await ready()).toEqual({ status: 503, legacy: 503, db: 'down' });
    pg = await startEmbeddedPostgres({ dir: join(dir, 'pg'), port: pgPort });
    await eventually(async () => (await ready()).status === 200, 20_000, 200);
    expect(await ready()).toEqual({ status: 200, legacy: 200, db: 'up' });
  });

  (natsBinary ? it : it.skip)('NATS stopped → 503 (db still up); started again → 200, no restart', async () => {
    await stopNats();
    await eventually(async () => (await ready()).status === 503, 10_000, 200);
    expect(await ready()).toMatchObject({ status: 503, db: 'up' });
    await startNats();
    await eventually(async () => (await ready()).status === 200, 20_000, 200);
  });
});

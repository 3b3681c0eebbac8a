/**
 * Per-call load balancing across replicas (issue #13): three directory processes behind one DNS
 * name (a headless Service's shape: one address per pod, the same port), a client on
 * `dns://…/name:port` with the platform's channel settings (round_robin), servers recycling
 * connections (GRPC_MAX_CONNECTION_AGE_MS). 3,000 calls spread within ±20 % per process; a
 * fourth process added to the name mid-run gets calls within about one connection age, because
 * clients resolve the name again when a server ends their connection. Real processes
 * (services/directory/dist), the real PostgreSQL, an own NATS server.
 */
import { startDnsServer, type TestDnsServer } from './support/dns'; // first: it sets grpc-js's resolver up
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryV1 } from '@iam/contracts';
import { createGrpcClient } from '@iam/platform/grpc';
import { TEST_CALL_KEY, type TestDatabase, createTestDatabase, eventually, testMetrics, testSigner } from '@iam/platform/testing';
import { freePort, natsBinary, testNatsServer } from './support/nats';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..', '..');
const DIRECTORY_MAIN = join(ROOT, 'services/directory/dist/main.js');
const runnable = Boolean(natsBinary) && existsSync(DIRECTORY_MAIN);

const NAME = 'directory.iam.test';
const MAX_AGE_MS = 4_000;
(runnable ? describe : describe.skip)('gRPC per-call balancing over a DNS name (three, then four directory processes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-lb-'));
  let grpcPort: number;
  let opsPort: number;
  const nats = testNatsServer(dir);
  const procs = new Map<string, ChildProcess>();
  let db: TestDatabase;
  let dns: TestDnsServer;
  let client: ReturnType<typeof createGrpcClient<typeof directoryV1.RoleServiceService>>;

  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_OPTIONS: '',
    NATS_URL: nats.url,
    DIRECTORY_DATABASE_URL: db.url,
    DIRECTORY_GRPC_PORT: String(grpcPort),
    DIRECTORY_METRICS_PORT: String(opsPort),
    GRPC_MAX_CONNECTION_AGE_MS: String(MAX_AGE_MS),
    GRPC_MAX_CONNECTION_AGE_GRACE_MS: '2000',
    LOG_LEVEL: 'warn',
    INTERNAL_CALL_KEY: TEST_CALL_KEY.toString('base64'),
  });

  async function startDirectory(host: string): Promise<void> {
    const p = spawn(process.execPath, [DIRECTORY_MAIN], { env: { ...env(), BIND_HOST: host }, stdio: ['ignore', 'ignore', 'inherit'] });
    procs.set(host, p);
    await eventually(async () => {
      const r = await fetch(`http://${host}:${opsPort}/health/ready`).catch(() => undefined);
      return r?.status === 200;
    }, 30_000, 100);
  }

  /** ListRoles calls each process has served (its own /metrics). */
  async function served(host: string): Promise<number> {
    const text = await (await fetch(`http://${host}:${opsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('grpc_server_handling_seconds_count') && l.includes('grpc_method="ListRoles"') && l.includes('grpc_code="OK"'));
    return line ? Number(line.split(' ').pop()) : 0;
  }
  const servedAll = async (hosts: readonly string[]): Promise<number[]> => Promise.all(hosts.map(served));

  async function calls(n: number, concurrency: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await client.call.listRoles({ page: 1, pageSize: 1, q: '', includeDeleted: false, cursor: '', sort: '' });
      }),
    );
  }

  beforeAll(async () => {
    [grpcPort, opsPort] = [await freePort(), await freePort()];
    await nats.start();
    db = await createTestDatabase('lb_directory');
    // The migration step, as its own process (the runtime then only checks the schema).
    execFileSync(process.execPath, [DIRECTORY_MAIN, 'migrate'], { env: env(), stdio: ['ignore', 'ignore', 'inherit'] });
    await Promise.all(['127.0.0.1', '127.0.0.2', '127.0.0.3'].map(startDirectory));
    dns = await startDnsServer();
    dns.set(NAME, ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    client = createGrpcClient(directoryV1.RoleServiceService, {
      target: `dns://127.0.0.1:${dns.port}/${NAME}:${grpcPort}`,
      metrics: testMetrics(),
      idempotent: ['listRoles'],
      assert: { signer: testSigner('gateway'), to: 'directory' },
    });
  });

  afterAll(async () => {
    client?.close();
    await dns?.close();
    await Promise.all(
      [...procs.values()].map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGTERM');
          }),
      ),
    );
    await nats.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('3,000 calls spread over the three processes within ±20 % each', async () => {
    const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
    // Until the channel has connected to every address, round_robin has fewer to choose from.
    await eventually(async () => {
      const before = await servedAll(hosts);
      await calls(30, 3);
      const after = await servedAll(hosts);
      return after.every((n, i) => n > before[i]!);
    }, 10_000, 50);
    const before = await servedAll(hosts);
    const started = Date.now();
    await calls(3_000, 8);
    const ms = Date.now() - started;
    const per = (await servedAll(hosts)).map((n, i) => n - before[i]!);
    process.stdout.write(`3,000 calls in ${ms} ms; per process: ${per.join(', ')}\n`);
    expect(per.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3_000);
    for (const n of per) {
      expect(n).toBeGreaterThanOrEqual(800);
      expect(n).toBeLessThanOrEqual(1_200);
    }
  });

  it('a fourth process added to the name gets calls within one connection age', async () => {
    const queriesBefore = dns.queries;
    await startDirectory('127.0.0.4');
    dns.set(NAME, ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const added = Date.now();
    let firstCallAfterMs: number | undefined;
    let running = true;
    const load = (async () => {
      while (running) await calls(20, 4);
    })();
    try {
      await eventually(async () => {
        if ((await served('127.0.0.4')) > 0) firstCallAfterMs ??= Date.now() - added;
        return firstCallAfterMs !== undefined;
      }, 3 * MAX_AGE_MS + 10_000, 100);
      // Once known, it takes its share.
      const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
      const before = await servedAll(hosts);
      await new Promise((r) => setTimeout(r, 1_500));
      const per = (await servedAll(hosts)).map((n, i) => n - before[i]!);
      process.stdout.write(`fourth process: first call ${firstCallAfterMs} ms after it joined (connection age ${MAX_AGE_MS} ms; DNS queries meanwhile ${dns.queries - queriesBefore}); next 1.5 s per process: ${per.join(', ')}\n`);
      expect(per[3]).toBeGreaterThan(0);
    } finally {
      running = false;
      await load;
    }
    // The connection age (with grpc-js's +10 % jitter) plus a second to reconnect.
    expect(firstCallAfterMs).toBeLessThanOrEqual(MAX_AGE_MS * 1.1 + 1_000);
  });
});

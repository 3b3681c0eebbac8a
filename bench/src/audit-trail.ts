/**
 * Scenario 10 (#15): a page of 100 audit entries over 10,000,000 (BENCH_AUDIT_ROWS), newest
 * first, through the audit service's gRPC (the gateway adds one hop and JSON). The trail is seeded
 * once into `bench_audit_trail` with SQL (ids, actors, targets and actions spread like a busy year; the
 * hashes are placeholders: verification is not what is measured) and reused by later runs.
 * Measured: p95 of each query shape, one client after a warm-up (what an operator's page waits;
 * client and service share this process), and the worst shape against the 50 ms target. Each
 * query includes the reader's audit.read check (against an in-memory stand-in of the directory).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { STREAMS, SUBJECTS, auditV1, encodeEvent } from '@iam/contracts';
import { auditEntities, auditMigrations, auditService, encodeAuditCursor as encodeCursor, readAuditConfig } from '@iam/audit';
import {
  type EventBus,
  InMemoryEventBus,
  JetStreamEventBus,
  Lifecycle,
  createGrpcClient,
  createLogger,
  createMetrics,
  openDatabase,
  readConfig,
  startService,
  withRequestContext,
} from '@iam/platform';
import { TestAccess, deleteNamespaceStreams, startAccessServer } from '@iam/platform/testing';
import { Client } from 'pg';
import { type ScenarioRow, closedLoop, r1 } from './load';

const ACTIONS = [
  'user.created',
  'user.updated',
  'user.roles.changed',
  'role.created',
  'role.permission.granted',
  'login.succeeded',
  'login.failed',
  'token.revoked',
  'sessions.revoked',
  'order.placed',
  'password.reset.requested',
  'account.locked',
];
const CHUNK = 500_000;
/** A fresh checkpoint signing key per run (the bench signs checkpoints as the service does). */
const checkpointKey = (): string => randomBytes(32).toString('base64');

export async function seedAuditTrail(url: string, rows: number, log: (s: string) => void): Promise<void> {
  const logger = createLogger({ level: 'warn', service: 'bench' });
  const ds = await openDatabase({ url, name: 'audit', entities: auditEntities, migrations: auditMigrations, logger, migrate: true });
  try {
    const [{ n }] = await ds.query<[{ n: string }]>('SELECT last_seq AS n FROM audit_chain WHERE id = 1');
    let have = Number(n);
    if (have >= rows) return;
    log(`seeding the audit trail: ${have} → ${rows} entries (once; kept in bench_audit_trail)`);
    // A bulk load: the secondary indexes are built once at the end (their definitions read from
    // the catalog, so they are exactly the migration's).
    const indexes = await ds.query<Array<{ name: string; def: string }>>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'audit_entries' AND starts_with(indexname, 'ix_audit_')`,
    );
    for (const ix of indexes) await ds.query(`DROP INDEX ${ix.name}`);
    while (have < rows) {
      const hi = Math.min(have + CHUNK, rows);
      await ds.transaction(async (m) => {
        await m.query('SET LOCAL synchronous_commit = off');
        await m.query('SET LOCAL statement_timeout = 0');
        await m.query(
          `INSERT INTO audit_entries (seq, id, event_id, occurred_at, recorded_at, actor_type, actor_id, actor_email, action, target_type, target_id,
                                      changes, trace_id, client_ip, user_agent, prev_hash, hash)
           SELECT s, gen_random_uuid(), 'bench-' || s,
                  now() - make_interval(secs => ($3::bigint - s) * (31536000.0 / $3::bigint)), clock_timestamp(),
                  CASE WHEN s % 10 = 0 THEN 'anonymous' ELSE 'user' END,
                  CASE WHEN s % 10 = 0 THEN NULL ELSE 'u-' || (s % 1000) END, NULL,
                  ($4::text[])[1 + s % $5::int], 'user', 't-' || (s % 100000),
                  '[]'::jsonb, NULL, '10.0.' || (s % 250) || '.1', 'bench', md5((s - 1)::text) || md5(s::text), md5(s::text) || md5((s + 1)::text)
             FROM generate_series($1::bigint, $2::bigint) s`,
          [have + 1, hi, rows, ACTIONS, ACTIONS.length],
        );
        await m.query('UPDATE audit_chain SET last_seq = $1::bigint, last_hash = md5($1::bigint::text) || md5(($1::bigint + 1)::text) WHERE id = 1', [hi]);
      });
      have = hi;
      log(`  ${have} entries`);
    }
    await ds.transaction(async (m) => {
      await m.query('SET LOCAL statement_timeout = 0');
      await m.query("SET LOCAL maintenance_work_mem = '512MB'");
      for (const ix of indexes) {
        log(`  building ${ix.name}`);
        await m.query(ix.def);
      }
      await m.query('ANALYZE audit_entries');
    });
  } finally {
    await ds.destroy();
  }
}

export async function auditScenario(url: string, rows: number, seconds: number, log: (s: string) => void): Promise<ScenarioRow> {
  await seedAuditTrail(url, rows, log);
  const logger = createLogger({ level: 'warn', service: 'bench-audit' });
  const lifecycle = new Lifecycle(logger, 5_000);
  const metrics = createMetrics({ defaultMetrics: false });
  const bus = new InMemoryEventBus({ logger });
  // Every query is for a reader holding audit.read now, asked of a directory: here a stand-in
  // answering from memory (the real one adds its principal query).
  const reader = randomUUID();
  const callKey = randomBytes(32);
  const directory = await startAccessServer(new TestAccess().grant(reader, 'audit.read'), logger, callKey);
  const config = readConfig({ AUDIT_DATABASE_URL: url, AUDIT_GRPC_PORT: '0', AUDIT_RETENTION_DAYS: '36500', DIRECTORY_GRPC_TARGET: directory.target, AUDIT_CHECKPOINT_SIGNING_KEY: checkpointKey() }, (e) => readAuditConfig(e));
  const rt = { logger, metrics, bus, lifecycle, bindHost: '127.0.0.1', callKey };
  const running = await startService(auditService(config, rt), rt);
  // Called as the gateway calls it: its assertion names the reader of the request it serves.
  const client = createGrpcClient(auditV1.AuditServiceService, {
    target: `127.0.0.1:${running.grpcPort}`,
    metrics,
    defaultDeadlineMs: 10_000,
    assert: { signer: { key: callKey, from: 'gateway' }, to: 'audit' },
  });
  const asReader = <T>(fn: () => Promise<T>): Promise<T> => withRequestContext({ actor: reader }, fn);
  try {
    // A cursor half-way down the trail (keyset: as cheap as the first page), as the API would give it.
    const [mid] = await running.dataSource.query<Array<{ us: string; seq: string }>>(
      'SELECT (extract(epoch FROM occurred_at) * 1000000)::bigint AS us, seq FROM audit_entries WHERE seq = $1',
      [Math.floor(rows / 2)],
    );
    const deep = encodeCursor({ occurredUs: String(mid!.us), seq: Number(mid!.seq) });
    const day = 86_400_000;
    const shapes: Record<string, (i: number) => auditV1.ListAuditEventsRequest> = {
      newest: () => ({ pageSize: 100, cursor: '', actorId: '', targetId: '', action: '' }),
      'deep cursor': () => ({ pageSize: 100, cursor: deep, actorId: '', targetId: '', action: '' }),
      actor: (i) => ({ pageSize: 100, cursor: '', actorId: `u-${(i * 7) % 1000}`, targetId: '', action: '' }),
      target: (i) => ({ pageSize: 100, cursor: '', actorId: '', targetId: `t-${(i * 31) % 100000}`, action: '' }),
      'action prefix': (i) => ({ pageSize: 100, cursor: '', actorId: '', targetId: '', action: ACTIONS[i % ACTIONS.length]!.split('.')[0]! + '.' }),
      'one day, 200 days ago': () => ({ pageSize: 100, cursor: '', actorId: '', targetId: '', action: '', from: new Date(Date.now() - 200 * day), to: new Date(Date.now() - 199 * day) }),
    };
    const p95: Record<string, number> = {};
    await closedLoop(2, 1, async () => (await asReader(() => client.call.listAuditEvents(shapes.newest!(0))), 200));
    for (const [name, make] of Object.entries(shapes)) {
      let i = 0;
      const r = await closedLoop(seconds, 1, async () => {
        await asReader(() => client.call.listAuditEvents(make(i++)));
        return 200;
      });
      p95[name] = r1(r.p95);
      log(`  audit ${name}: p95 ${p95[name]} ms (${r1(r.ok)}/s)`);
    }
    const worst = Math.max(...Object.values(p95));
    return {
      scenario: `10. audit trail: a page of 100 over ${rows.toLocaleString('en-US')} entries, p95 of the slowest query shape (gRPC)`,
      value: Object.entries(p95)
        .map(([k, v]) => `${k} ${v} ms`)
        .join(', '),
      baseline: '—',
      ratio: worst,
      target: 'p95 ≤ 50 ms',
      met: worst <= 50,
    };
  } finally {
    client.close();
    await lifecycle.shutdown('bench done');
    await directory.close();
    await bus.close();
  }
}

/**
 * Scenario 10b (issue #25 item 1): how fast the trail records, in batches in stream order (the
 * group-commit recorder) through the real bus: `count` login.failed events published 64 at a time
 * into a fresh database and a private NATS namespace (the in-process bus without NATS), timed from
 * the first publish until the last is in the chain. The rate one consumer sustains, whatever the
 * number of pods.
 */
export async function auditRecordingScenario(adminUrl: string, natsUrl: string | undefined, count: number, log: (s: string) => void): Promise<ScenarioRow> {
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = '/bench_audit_rate';
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS bench_audit_rate WITH (FORCE)');
  await admin.end();
  const logger = createLogger({ level: 'warn', service: 'bench-audit' });
  const lifecycle = new Lifecycle(logger, 5_000);
  const metrics = createMetrics({ defaultMetrics: false });
  const namespace = `bench${Date.now().toString(36)}`;
  const bus: EventBus = natsUrl ? new JetStreamEventBus({ url: natsUrl, name: 'bench-audit', namespace, logger }) : new InMemoryEventBus({ logger });
  const config = readConfig({ AUDIT_DATABASE_URL: dbUrl.toString(), AUDIT_GRPC_PORT: '0', AUDIT_CHECKPOINT_SIGNING_KEY: checkpointKey() }, (e) => readAuditConfig(e));
  const rt = { logger, metrics, bus, lifecycle, bindHost: '127.0.0.1', callKey: randomBytes(32) };
  const running = await startService(auditService(config, rt), rt);
  try {
    await bus.declareStreams([STREAMS.identity]);
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < count) {
          next++;
          const data = encodeEvent(SUBJECTS.loginFailed, { userId: randomUUID(), failures: 1, reason: 'invalid_credentials' });
          await bus.publish({ id: randomUUID(), subject: SUBJECTS.loginFailed, data, occurredAt: new Date(), headers: { 'iam-client-ip': '198.51.100.7' } });
        }
      }),
    );
    const published = Date.now() - started;
    for (;;) {
      const [row] = await running.dataSource.query<[{ n: string }]>('SELECT last_seq AS n FROM audit_chain WHERE id = 1');
      if (Number(row.n) >= count) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (Date.now() - started) / 1000;
    const rate = count / seconds;
    log(`  audit recording: ${count} events in ${r1(seconds)} s (published in ${published} ms): ${r1(rate)}/s`);
    return {
      scenario: `10b. audit trail recording rate: ${count.toLocaleString('en-US')} events published 64 at a time, recorded in batches in stream order (${bus.kind === 'jetstream' ? 'NATS JetStream' : 'in-process bus'})`,
      value: `${r1(rate)} events/s (published in ${r1(published / 1000)} s)`,
      baseline: '—',
      ratio: r1(rate),
      target: '≥ 2,000 events/s',
      met: rate >= 2_000,
    };
  } finally {
    await lifecycle.shutdown('bench done');
    await bus.close();
    if (natsUrl) await deleteNamespaceStreams(natsUrl, namespace).catch(() => undefined);
  }
}

/** `node bench/dist/audit-trail.js`: this scenario alone. */
if (require.main === module) {
  const url = process.env.BENCH_AUDIT_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_audit_trail';
  const rows = Number(process.env.BENCH_AUDIT_ROWS ?? 10_000_000);
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const admin = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  auditScenario(url, rows, seconds, out)
    .then(async (row) => [row, await auditRecordingScenario(admin, process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222', 2_000, out)])
    .then(
      (rows) => out(JSON.stringify(rows)),
      (err: unknown) => {
        process.stderr.write(`${String(err)}\n`);
        process.exit(1);
      },
    );
}

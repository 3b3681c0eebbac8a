#!/usr/bin/env node
/**
 * Scenario 12 (issue #38): outgoing webhooks, through the real path. The notification service runs
 * in this process (its PostgreSQL database, NATS JetStream when reachable in a private namespace,
 * else the in-process bus); the receiver is a process of its own (webhook-receiver.ts).
 *
 *   12a sustained deliveries/s: BENCH_WEBHOOK_EVENTS (2,000) `directory.user.created` events
 *       written at once into an outbox → relay → bus → fan-out to C endpoints (one message each)
 *       → the dispatcher (WEBHOOK_CONCURRENCY = C) → the receiver, signed (HMAC) and recorded;
 *       deliveries over the time from the first to the last arrival. Baseline: a bare undici POST
 *       loop, C at once, of the same body to the same receiver (no signing, no database).
 *   12b commit → first attempt at 100 events/s: events written one transaction each at 100/s for
 *       BENCH_WEBHOOK_SECONDS (20) to one endpoint; the receiver's arrival time less the event's
 *       own timestamp (its outbox row's time, just before the commit); p50 and p99.
 *
 * `node bench/dist/webhooks.js` runs it alone and writes its table into bench/README.md;
 * `make bench` runs it as scenario 12 (BENCH_ONLY=webhooks for it alone).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { SUBJECTS, eventsV1, webhooksV1 } from '@iam/contracts';
import { readNotificationConfig, notificationService } from '@iam/notification';
import { type EventBus, InMemoryEventBus, JetStreamEventBus, Lifecycle, type ServiceRuntime, appendEvents, createGrpcClient, createMetrics, event, readConfig, startService, withRequestContext } from '@iam/platform';
import { TEST_CALL_KEY, TestAccess, createTestDatabase, deleteNamespaceStreams, startAccessServer, testLogger } from '@iam/platform/testing';
import { Agent, request } from 'undici';
import { cpuSeconds } from './cpu';
import { type ScenarioRow, median, r1, r2 } from './load';

const ROOT = join(__dirname, '..', '..');
const log = (s: string) => process.stdout.write(`${s}\n`);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

interface Receiver {
  port: number;
  pid: number;
  count(): Promise<number>;
  stats(): Promise<Array<[number, number, string]>>;
  reset(): void;
  stop(): void;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'webhook-receiver.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const queue: Array<(l: string) => void> = [];
  lines.on('line', (l) => queue.shift()?.(l));
  const next = () => new Promise<string>((resolve) => queue.push(resolve));
  const { port } = JSON.parse(await next()) as { port: number };
  return {
    port,
    pid: child.pid!,
    count: async () => {
      const p = next();
      child.stdin!.write('count\n');
      return Number(await p);
    },
    stats: async () => {
      const p = next();
      child.stdin!.write('stats\n');
      return JSON.parse(await p) as Array<[number, number, string]>;
    },
    reset: () => void child.stdin!.write('reset\n'),
    stop: () => void child.stdin!.write('exit\n'),
  };
}

const userCreated = (i: number) =>
  event(SUBJECTS.userCreated, eventsV1.UserChanged.create({ userId: randomUUID(), email: `bench${i}@example.com`, firstName: 'Bench', lastName: `User ${i}`, roles: ['Support'], emailVerified: true }));

export async function webhookScenarios(opts: { pgUrl: string; natsUrl?: string; runs: number; events: number; seconds: number; concurrency: number }): Promise<ScenarioRow[]> {
  // The test kit's database helper makes the bench's own database on this server.
  process.env.IAM_TEST_PG_URL ??= opts.pgUrl;
  const logger = testLogger();
  const lifecycle = new Lifecycle(logger, 10_000);
  const receiver = await startReceiver();
  const namespace = `bench${randomBytes(3).toString('hex')}`;
  const bus: EventBus = opts.natsUrl ? new JetStreamEventBus({ url: opts.natsUrl, name: 'bench-webhooks', namespace, logger }) : new InMemoryEventBus({ logger });
  const db = await createTestDatabase('bench_webhooks');
  const access = new TestAccess().grant('bench-admin', 'webhooks.manage');
  const directory = await startAccessServer(access, logger, TEST_CALL_KEY);
  const C = opts.concurrency;
  const env = {
    NOTIFICATION_DATABASE_URL: db.url,
    NOTIFICATION_GRPC_PORT: '0',
    DIRECTORY_GRPC_TARGET: directory.target,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CONCURRENCY: String(C),
  };
  const config = readConfig(env, (e) => readNotificationConfig(e));
  const rt: ServiceRuntime = { logger, metrics: createMetrics({ defaultMetrics: false }), bus, lifecycle, bindHost: '127.0.0.1', callKey: TEST_CALL_KEY };
  const running = await startService(notificationService(config, rt), rt);
  const hooks = createGrpcClient(webhooksV1.WebhookServiceService, { target: `127.0.0.1:${running.grpcPort}`, assert: { signer: { key: TEST_CALL_KEY, from: 'gateway' }, to: 'notification' }, metrics: rt.metrics });
  const asAdmin = <T>(fn: () => Promise<T>) => withRequestContext({ actor: 'bench-admin' }, fn);
  const origin = `http://127.0.0.1:${receiver.port}`;
  const emit = (events: ReturnType<typeof userCreated>[]) => running.dataSource.transaction((m) => appendEvents(m, events));
  /**
   * CPU seconds so far of the parts a delivery costs: this process (the notification service, or
   * the bare loop), the receiver, and the bench database's PostgreSQL backends (none for the loop).
   */
  const dbName = new URL(db.url).pathname.slice(1);
  const cpuNow = async () => {
    const pids = await running.dataSource.query<Array<{ pid: number }>>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
    const own = process.cpuUsage();
    return { own: (own.user + own.system) / 1e6, receiver: cpuSeconds(receiver.pid), pg: pids.reduce((a, r) => a + cpuSeconds(r.pid), 0) };
  };
  type Cpu = Awaited<ReturnType<typeof cpuNow>>;
  /** µs of CPU per delivery between two snapshots, by part. */
  const perDelivery = (a: Cpu, b: Cpu, n: number) => ({ own: ((b.own - a.own) / n) * 1e6, receiver: ((b.receiver - a.receiver) / n) * 1e6, pg: ((b.pg - a.pg) / n) * 1e6 });
  const untilArrived = async (n: number, timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const c = await receiver.count();
      if (c >= n) return receiver.stats();
      if (Date.now() > end) throw new Error(`only ${c} of ${n} deliveries arrived`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const rows: ScenarioRow[] = [];
  try {
    // 12a: C endpoints, every event to each.
    const endpoints: string[] = [];
    for (let i = 0; i < C; i++) endpoints.push((await asAdmin(() => hooks.call.createEndpoint({ url: `${origin}/e${i}`, description: '', eventTypes: ['user.created'], enabled: true, ed25519: false }))).endpoint!.id);
    const sample = JSON.stringify({ type: 'user.created', timestamp: new Date().toISOString(), data: { id: randomUUID(), email: 'bench0@example.com', firstName: 'Bench', lastName: 'User 0', phone: null, emailVerified: true, roles: ['Support'] } });
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    const ratios: number[] = [];
    const rates: number[] = [];
    const bare: number[] = [];
    const drains: number[] = [];
    const drainRatios: number[] = [];
    const cpuBare: number[] = [];
    const cpuDrain: number[] = [];
    const cpuParts: Array<{ own: number; receiver: number; pg: number }> = [];
    for (let run = 0; run < opts.runs; run++) {
      // Baseline: the bare undici loop, C at once, the same number of POSTs.
      receiver.reset();
      const total = opts.events * C;
      let sent = 0;
      const c0 = await cpuNow();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: C }, async (_, w) => {
          while (sent < total) {
            sent++;
            const r = await request(`${origin}/bare${w}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: sample });
            await r.body.dump();
          }
        }),
      );
      const bareRate = total / ((performance.now() - t0) / 1000);
      const bareCpu = perDelivery(c0, await cpuNow(), total);
      // The dispatcher draining a backlog: C × events messages queued while the endpoints were
      // disabled (written straight into its table, as the fan-out writes them), then enabled.
      receiver.reset();
      for (const id of endpoints) await asAdmin(() => hooks.call.updateEndpoint({ id, enabled: false, eventTypes: undefined }));
      await running.dataSource.query(
        `INSERT INTO webhook_messages (endpoint_id, id, event_type, occurred_at, payload)
         SELECT e.id, gen_random_uuid(), 'user.created', now(), $2 FROM unnest($1::uuid[]) AS e (id), generate_series(1, $3)`,
        [endpoints, sample, opts.events],
      );
      const c1 = await cpuNow();
      for (const id of endpoints) await asAdmin(() => hooks.call.updateEndpoint({ id, enabled: true, eventTypes: undefined }));
      const drained = (await untilArrived(total, 300_000)).map((a) => a[0]).sort((a, b) => a - b);
      const drainCpu = perDelivery(c1, await cpuNow(), total);
      cpuBare.push(bareCpu.own + bareCpu.receiver);
      cpuDrain.push(drainCpu.own + drainCpu.receiver + drainCpu.pg);
      cpuParts.push(drainCpu);
      log(`   12a run ${run + 1}: CPU per delivery ${r1(drainCpu.own)} µs notification + ${r1(drainCpu.pg)} µs PostgreSQL + ${r1(drainCpu.receiver)} µs receiver; bare loop ${r1(bareCpu.own)} + ${r1(bareCpu.receiver)} µs (load ${loadavg()[0]!.toFixed(1)})`);
      const drainRate = (total - 1) / ((drained[drained.length - 1]! - drained[0]!) / 1000);
      // The whole path: every event at once into an outbox, then until every delivery arrived.
      receiver.reset();
      const batch = Array.from({ length: opts.events }, (_, i) => userCreated(run * opts.events + i));
      for (let i = 0; i < batch.length; i += 500) await emit(batch.slice(i, i + 500));
      const arrivals = (await untilArrived(total, 300_000)).map((a) => a[0]).sort((a, b) => a - b);
      const rate = (total - 1) / ((arrivals[arrivals.length - 1]! - arrivals[0]!) / 1000);
      log(`   12a run ${run + 1}: the dispatcher drains ${r1(drainRate)} deliveries/s; events → deliveries ${r1(rate)}/s (fan-out included)`);
      drains.push(drainRate);
      drainRatios.push(drainRate / bareRate);
      log(`   12a run ${run + 1}: bare undici loop ${r1(bareRate)} POST/s (${C} at once)`);
      rates.push(rate);
      bare.push(bareRate);
      ratios.push(rate / bareRate);
    }
    await agent.close();
    rows.push({ scenario: `12a webhook deliveries/s, the dispatcher draining a backlog (${C} endpoints, ${C} at once)`, value: `${r1(median(drains))}/s`, baseline: `bare undici POST loop ${r1(median(bare))}/s`, ratio: r2(median(drainRatios)), target: '≥ 0.5×', met: median(drainRatios) >= 0.5 });
    const cpuRatio = median(cpuBare) / median(cpuDrain);
    const part = (k: 'own' | 'receiver' | 'pg') => r1(median(cpuParts.map((c) => c[k])));
    rows.push({
      scenario: `12a CPU per delivery, the same drain (notification process + its PostgreSQL backends + receiver; bare: its process + receiver)`,
      value: `${r1(median(cpuDrain))} µs (${part('own')} + ${part('pg')} + ${part('receiver')})`,
      baseline: `bare undici POST loop ${r1(median(cpuBare))} µs`,
      ratio: r2(cpuRatio),
      target: '(≥ 0.5× is what the throughput target needs on a CPU-bound machine)',
      met: cpuRatio >= 0.5,
    });
    rows.push({ scenario: `12a′ the same from events: outbox → NATS → fan-out → dispatcher`, value: `${r1(median(rates))}/s`, baseline: `bare undici POST loop ${r1(median(bare))}/s`, ratio: r2(median(ratios)), target: '(the fan-out\'s cost)', met: true });
    for (const id of endpoints) await asAdmin(() => hooks.call.deleteEndpoint({ id, includeDeleted: false }));

    // 12b: one endpoint, 100 events/s, one transaction each.
    await asAdmin(() => hooks.call.createEndpoint({ url: `${origin}/latency`, description: '', eventTypes: ['user.created'], enabled: true, ed25519: false }));
    const p50s: number[] = [];
    const p99s: number[] = [];
    for (let run = 0; run < opts.runs; run++) {
      receiver.reset();
      const n = opts.seconds * 100;
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const due = start + i * 10;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        void emit([userCreated(i)]);
      }
      const arrivals = await untilArrived(n, 120_000);
      const lat = arrivals.map(([at, ts]) => at - ts);
      p50s.push(pct(lat, 50));
      p99s.push(pct(lat, 99));
      log(`   12b run ${run + 1}: commit → first attempt p50 ${r1(pct(lat, 50))} ms, p99 ${r1(pct(lat, 99))} ms at 100 events/s`);
    }
    rows.push({ scenario: '12b webhook commit → first attempt, 100 events/s', value: `p99 ${r1(median(p99s))} ms (p50 ${r1(median(p50s))} ms)`, baseline: '—', ratio: r2(median(p99s) / 1000), target: 'p99 ≤ 2 s', met: median(p99s) <= 2_000 });
  } finally {
    hooks.close();
    await lifecycle.shutdown('bench done');
    await directory.close();
    await bus.close();
    if (opts.natsUrl) await deleteNamespaceStreams(opts.natsUrl, namespace).catch(() => undefined);
    await db.drop();
    receiver.stop();
  }
  return rows;
}

if (require.main === module) {
  void (async () => {
    const cfg = readConfig(process.env, (e) => ({
      runs: e.int('BENCH_RUNS', { default: 3, min: 1 }),
      events: e.int('BENCH_WEBHOOK_EVENTS', { default: 2_000, min: 10 }),
      seconds: e.int('BENCH_WEBHOOK_SECONDS', { default: 20, min: 1 }),
      concurrency: e.int('BENCH_WEBHOOK_CONCURRENCY', { default: 16, min: 1 }),
      natsUrl: e.optionalString('BENCH_NATS_URL') ?? 'nats://127.0.0.1:4222',
      pgUrl: e.string('BENCH_PG_URL', { default: 'postgres://postgres@127.0.0.1:5432/postgres' }),
    }));
    const loadBefore = loadavg()[0]!.toFixed(1);
    const rows = await webhookScenarios(cfg);
    const date = new Date().toISOString().slice(0, 10);
    const load = `load average ${loadBefore} before, ${loadavg()[0]!.toFixed(1)} after`;
    const table = [
      `Run ${date} (medians of ${cfg.runs}; a shared 2-core machine under other jobs' load, ${load}: compare ratios, not absolute numbers):`,
      '',
      '| scenario | value | baseline | ratio | target | met |',
      '|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.scenario} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.target} | ${r.met ? 'yes' : 'no'} |`),
    ].join('\n');
    log(table);
    const readme = join(ROOT, 'bench', 'README.md');
    const text = readFileSync(readme, 'utf8');
    if (text.includes('<!-- webhooks:start -->')) writeFileSync(readme, text.replace(/<!-- webhooks:start -->[\s\S]*<!-- webhooks:end -->/, `<!-- webhooks:start -->\n${table}\n<!-- webhooks:end -->`));
    process.exit(0);
  })().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}

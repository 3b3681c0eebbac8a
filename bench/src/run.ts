#!/usr/bin/env node
/**
 * `make bench`: each scenario against a baseline measured in the same run, as a ratio, the
 * median of several runs. Not part of CI. Writes the table into bench/README.md.
 *
 *   1. login/s ÷ raw argon2id verify/s (same parameters, same concurrency); overload → 429s, not timeouts
 *   2. authenticated GET /api/v1/users?id= req/s (read cache off) ÷ the bare pipeline (Fastify →
 *      grpc-js → one pg primary-key SELECT, one process) and ÷ hello-world; p99
 *   2c. the same with the gateway read cache on ÷ the bare pipeline
 *   3. refresh rotations/s ÷ the bare pipeline (and ÷ hello-world)
 *   4. GET /api/v1/users?q=… p95 over N seeded users (÷ the p95 of GET ?id= in the same run)
 *   5-6. password-reset request → mail, events/s through the pipeline
 *   7. GET /api/v1/products req/s ÷ hello-world; 8. GraphQL checkout/s ÷ GET /api/v1/products req/s
 *   11. OpenID provider: client_credentials grants/s and refresh grants/s ÷ a bare oidc-provider
 *       (in-memory adapter, static client) in the same run (oidc.ts, oidc-floor.ts)
 *   12. outgoing webhooks: deliveries/s ÷ a bare undici POST loop; commit → first attempt (webhooks.ts)
 *   13. bulk import of 100,000 bcrypt users ÷ a bare batched pg INSERT of the same rows; RSS (user-import.ts)
 */
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '@iam/platform';
import { startSmtpSink } from '@iam/platform/testing';
import { Client } from 'pg';
import { type ApiBench, loginScenarios, readByIdScenarios, refreshScenarios, searchScenarios } from './api-scenarios';
import { type LoadResult, type ScenarioRow, cannon, median, r1 } from './load';
import { seedMailUsers } from './seed';
import { edgeScenarios } from './edge';
import { oidcScenarios } from './oidc';
import { mailScenarios } from './mail';
import { footprintScenarios } from './footprint';
import { auditRecordingScenario, auditScenario } from './audit-trail';
import { type OwnPg, startOwnPg } from './own-pg';
import { children, cpuByPart, cpuPerOp, cpuTotal, describeCpu, idleRates } from './cpu';
import { readPathScenarios } from './read-path';
import { webhookScenarios } from './webhooks';
import { importScenario } from './user-import';
import { AUTH_LIMITS_LIFTED, type BenchSystem, ROOT, grpcPortsEnv, startChild, startExtraGateway, startSystem } from './system';

const cfg = readConfig(process.env, (e) => ({
  seconds: e.int('BENCH_SECONDS', { default: 10, min: 1 }),
  runs: e.int('BENCH_RUNS', { default: 3, min: 1 }),
  users: e.int('BENCH_USERS', { default: 1_000_000, min: 1_000 }),
  pgUrl: e.string('BENCH_PG_URL', { default: 'postgres://postgres@127.0.0.1:5432/postgres' }),
  /** `own`: the bench's own PostgreSQL (own-pg.ts), sized for the search's users; `default`: BENCH_PG_URL. */
  pg: e.string('BENCH_PG', { default: 'default' }),
  pgPort: e.port('BENCH_PG_PORT', { default: 55432 }),
  pgSharedBuffers: e.string('BENCH_PG_SHARED_BUFFERS', { default: '1GB' }),
  /** The databases' names: <prefix>directory, <prefix>identity, … (a shared server: a prefix per user of it). */
  dbPrefix: e.string('BENCH_DB_PREFIX', { default: 'bench_' }),
  /** Scenario 4: pages followed by cursor after each search's first page. */
  cursorPages: e.int('BENCH_SEARCH_CURSOR_PAGES', { default: 8, min: 1 }),
  natsUrl: e.optionalString('BENCH_NATS_URL') ?? 'nats://127.0.0.1:4222',
  port: e.port('BENCH_PORT', { default: 18080 }),
  /** The services' gRPC ports: consecutive from this one (unset: free ports the kernel picks). */
  grpcPortBase: e.optionalString('BENCH_GRPC_PORT_BASE'),
  only: e.optionalString('BENCH_ONLY')?.split(',').map((x) => x.trim()),
  mailRequests: e.int('BENCH_MAIL_REQUESTS', { default: 1_000, min: 10 }),
  footprintSeconds: e.int('BENCH_FOOTPRINT_SECONDS', { default: 60, min: 5 }),
  auditRows: e.int('BENCH_AUDIT_ROWS', { default: 10_000_000, min: 1_000 }),
  importUsers: e.int('BENCH_IMPORT_USERS', { default: 100_000, min: 1_000 }),
}));
const enabled = (n: string): boolean => !cfg.only || cfg.only.includes(n);

const ADMIN = { email: 'bench-admin@example.com', password: 'Bench-Passw0rd!' };
const log = (s: string) => process.stdout.write(`${s}\n`);

async function reachable(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

function natsReachable(url: string): boolean {
  const u = new URL(url);
  try {
    execSync(`bash -c 'exec 3<>/dev/tcp/${u.hostname}/${u.port || 4222}'`, { stdio: 'ignore', timeout: 2_000 });
    return true;
  } catch {
    return false;
  }
}

async function repeat(runs: number, fn: () => Promise<LoadResult>): Promise<LoadResult> {
  const all: LoadResult[] = [];
  for (let i = 0; i < runs; i++) all.push(await fn());
  const m = (k: keyof LoadResult) => median(all.map((r) => r[k]));
  return { ok: m('ok'), non2xx: m('non2xx'), status429: m('status429'), errors: m('errors'), timeouts: m('timeouts'), p50: m('p50'), p95: m('p95'), p99: m('p99') };
}

async function main(): Promise<void> {
  if (cfg.pg !== 'own' && cfg.pg !== 'default') throw new Error('BENCH_PG must be own or default');
  const own = cfg.pg === 'own' ? startOwnPg({ port: cfg.pgPort, sharedBuffers: cfg.pgSharedBuffers, log }) : undefined;
  try {
    await bench(own);
  } finally {
    own?.stop();
  }
}

async function bench(own: OwnPg | undefined): Promise<void> {
  const pgUrl = own ? own.url('postgres') : cfg.pgUrl;
  const env: Record<string, string> = {
    GATEWAY_PROFILES: 'full,edge',
    RATE_LIMIT_CHECKOUT_PER_MINUTE: '10000000',
    RATE_LIMIT_CHECKOUT_BURST: '10000000',
    RATE_LIMIT_CHECKOUT_ADDRESS_PER_MINUTE: '10000000',
    RATE_LIMIT_CHECKOUT_ADDRESS_BURST: '10000000',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ...AUTH_LIMITS_LIFTED,
    RATE_LIMIT_EMAIL_ACTIONS_PER_MINUTE: '10000000',
    RATE_LIMIT_EMAIL_ACTIONS_BURST: '10000000',
    EMAIL_ACTION_MAX_PER_HOUR: '10000',
    EMAIL_ACTION_BASE_URL: 'http://app.bench',
    EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    DATA_DIR: join(ROOT, '.data', 'bench'),
    EMBEDDED_PG_PORT: '54339',
    // The issuer is the address the bench calls; the provider's own listener beside the gateway's port.
    PUBLIC_URL: `http://127.0.0.1:${cfg.port}`,
    IDENTITY_OP_PORT: String(cfg.port + 13),
    IDENTITY_OP_URL: `http://127.0.0.1:${cfg.port + 13}`,
  };
  let directoryUrl: string;
  if (await reachable(pgUrl)) {
    for (const s of ['directory', 'identity', 'notification', 'commerce', 'audit']) {
      const u = new URL(pgUrl);
      u.pathname = `/${cfg.dbPrefix}${s}`;
      env[`${s.toUpperCase()}_DATABASE_URL`] = u.toString();
    }
    env.JWT_KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64');
    directoryUrl = env.DIRECTORY_DATABASE_URL!;
  } else {
    log('no external PostgreSQL: the system uses its embedded one');
    const creds = JSON.parse(readFileSync(join(env.DATA_DIR!, 'postgres', 'credentials.json'), 'utf8').toString() || '{}') as { user?: string; password?: string };
    directoryUrl = `postgres://${creds.user}:${creds.password}@127.0.0.1:54339/directory`;
  }
  if (natsReachable(cfg.natsUrl)) env.NATS_URL = cfg.natsUrl;
  if (env.DIRECTORY_DATABASE_URL) {
    // A fresh identity database per run (tokens, lockouts); the seeded directory is kept.
    const c = new Client({ connectionString: pgUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${cfg.dbPrefix}identity" WITH (FORCE)`);
    await c.end();
  }
  const cpuPg = env.DIRECTORY_DATABASE_URL ? new Client({ connectionString: pgUrl }) : undefined;
  await cpuPg?.connect();
  if (own) log(`PostgreSQL: ${own.describe}`);
  log(`system: PostgreSQL ${env.DIRECTORY_DATABASE_URL ? 'external' : 'embedded'}, bus ${env.NATS_URL ? 'NATS JetStream' : 'in-process'}; ${cfg.runs} runs × ${cfg.seconds} s per scenario`);

  const split = Boolean(env.DIRECTORY_DATABASE_URL && env.NATS_URL);
  log(`processes: ${split ? 'one per service (production shape)' : 'all-in-one'}`);
  Object.assign(env, await grpcPortsEnv(cfg.grpcPortBase ? Number(cfg.grpcPortBase) : undefined));
  const smtp = await startSmtpSink();
  env.SMTP_URL = `smtp://127.0.0.1:${smtp.port}`;
  // Whatever started is stopped on the way out, a failed start included.
  const started: Array<() => unknown> = [() => smtp.close()];
  const rows: ScenarioRow[] = [];
  try {
    const sys = await startSystem(env, cfg.port, split);
    started.push(() => sys.stop());
    // Scenario 2 measures the read path itself: a second gateway with the read cache off (in the
    // all-in-one shape there is one gateway, so there the whole system runs with it off and 2c is skipped).
    let uncached: BenchSystem = sys;
    if (split) {
      uncached = await startExtraGateway({ ...env, GATEWAY_READ_CACHE: 'false' }, cfg.port + 1);
      started.push(() => uncached.stop());
    }
    // The baselines beside the system's port (18090 and 18091 with the default BENCH_PORT).
    const helloPort = cfg.port + 10;
    const barePort = cfg.port + 11;
    const hello = await startChild('hello.js', [String(helloPort)]);
    started.push(() => hello.kill());
    const bare = await startChild('bare.js', [String(barePort), directoryUrl]);
    started.push(() => bare.kill());
    const post = async (path: string, body: unknown, token?: string) => {
      const r = await fetch(sys.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: r.status, json: (await r.json().catch(() => null)) as Record<string, unknown> };
    };
    const loginAdmin = async () => (await post('/api/v1/auth/generate-jwt', ADMIN)).json.token as string;
    const admin = await loginAdmin();
    const benchUser = { firstName: 'Bench', lastName: 'User', email: `bench-${Date.now()}@example.com`, password: 'Bench-Passw0rd!' };
    const created = await post('/api/v1/users', benchUser, admin);
    const userId = created.json.id as string;
    // CPU per successful request of the system's processes and their backends (external PostgreSQL only).
    const pids = children();
    // The system's background CPU at rest (health checks, relay polls), taken out of each window.
    const idle = cpuPg ? await idleRates(cpuPg, pids, cfg.dbPrefix, 5) : undefined;
    if (idle) log(`   idle CPU (ms/s): ${[...idle].filter(([, v]) => v > 0.0005).map(([k, v]) => `${k} ${r1(v * 1000)}`).join(', ')}`);
    const measuredCpu = async (run: () => Promise<LoadResult>): Promise<{ r: LoadResult; cpuMs: number; cpu: string }> => {
      const before = cpuPg ? await cpuByPart(cpuPg, pids, cfg.dbPrefix) : undefined;
      const started = performance.now();
      const r = await run();
      if (!cpuPg || !before || !idle) return { r, cpuMs: NaN, cpu: 'no CPU accounting (embedded PostgreSQL)' };
      const per = cpuPerOp(before, await cpuByPart(cpuPg, pids, cfg.dbPrefix), r.ok * cfg.seconds, { rates: idle, seconds: (performance.now() - started) / 1000 });
      return { r, cpuMs: cpuTotal(per), cpu: describeCpu(per) };
    };
    const api: ApiBench = {
      base: sys.base,
      uncachedBase: uncached.base,
      split,
      seconds: cfg.seconds,
      runs: cfg.runs,
      conc: availableParallelism(),
      user: benchUser,
      userId,
      directoryUrl,
      users: cfg.users,
      cursorPages: cfg.cursorPages,
      baseline: { hello: NaN, bare: NaN, bareCpu: [], column: '' },
      repeat: (fn) => repeat(cfg.runs, fn),
      measuredCpu,
      post,
      loginAdmin,
      log,
    };
    if (enabled('1')) rows.push(...(await loginScenarios(api)));

    // The baselines of 2, 3, 7 and 11: hello-world and the bare pipeline.
    const baselines = enabled('2') || enabled('3') || enabled('7') || enabled('11');
    const helloR = baselines ? await repeat(cfg.runs, () => cannon({ url: `http://127.0.0.1:${helloPort}/`, connections: 16, duration: cfg.seconds })) : { ok: NaN };
    const bareCpu: number[] = [];
    const bareR = baselines
      ? await repeat(cfg.runs, async () => {
          const m = await measuredCpu(() => cannon({ url: `http://127.0.0.1:${barePort}/users/${userId}`, connections: 16, duration: cfg.seconds }));
          bareCpu.push(m.cpuMs);
          return m.r;
        })
      : { ok: NaN, p99: NaN };
    if (baselines) log(`   baselines: hello-world ${r1(helloR.ok)}/s, bare pipeline ${r1(bareR.ok)}/s (p99 ${r1(bareR.p99)} ms)`);
    api.baseline = { hello: helloR.ok, bare: bareR.ok, bareCpu, column: `bare ${r1(bareR.ok)}/s (p99 ${r1(bareR.p99)} ms); hello ${r1(helloR.ok)}/s` };
    if (enabled('2')) rows.push(...(await readByIdScenarios(api)));
    if (enabled('3')) rows.push(...(await refreshScenarios(api)));
    if (enabled('4')) rows.push(...(await searchScenarios(api)));

    // 7–8. the edge BFF: catalog reads and checkouts
    if (enabled('7')) {
      const customers: string[] = [];
      // A fresh administrator token: the run's first one may have expired by now (JWT_EXPIRY).
      const adminNow = await loginAdmin();
      for (let i = 0; i < 4; i++) {
        const c = { firstName: 'Bench', lastName: `Buyer${i}`, email: `bench-buyer-${Date.now()}-${i}@example.com`, password: 'Bench-Passw0rd!' };
        await post('/api/v1/users', c, adminNow);
        customers.push((await post('/api/v1/auth/generate-jwt', { email: c.email, password: c.password })).json.token as string);
      }
      rows.push(
        ...(await edgeScenarios({ base: sys.base, adminToken: await loginAdmin(), customerTokens: customers, helloPerSecond: helloR.ok, seconds: cfg.seconds, repeat: (fn) => repeat(cfg.runs, fn), log })),
      );
    }

    // 11. the OpenID provider against the bare library, in the same run
    if (enabled('11')) {
      const floor = await startChild('oidc-floor.js', [String(cfg.port + 12)]);
      started.push(() => floor.kill());
      rows.push(
        ...(await oidcScenarios({
          base: sys.base,
          floorBase: `http://127.0.0.1:${cfg.port + 12}`,
          adminToken: await loginAdmin(),
          user: ADMIN,
          bareOk: bareR.ok,
          seconds: cfg.seconds,
          repeat: (fn) => repeat(cfg.runs, fn),
          log,
        })),
      );
    }

    // 5–6. reset request → mail received, and events/s through the pipeline
    if (enabled('5')) {
      log('\n5. password-reset request → mail received');
      const emails = await seedMailUsers(directoryUrl, cfg.mailRequests);
      rows.push(...(await mailScenarios({ base: sys.base, smtp, emails, log })));
    }
  } finally {
    for (const stop of started.reverse()) await stop();
  }

  // 2a–2b. the read path at equal process counts: the all-in-one process against the one-process floor.
  if (enabled('2')) {
    // Without SMTP_URL (the sink is gone with the system): the all-in-one keeps mail in memory.
    const { SMTP_URL: _smtp, ...base } = env;
    rows.push(
      ...(await readPathScenarios({ env: base, port: cfg.port + 30, barePort: 18092, directoryUrl, admin: ADMIN, seconds: cfg.seconds, runs: cfg.runs, connections: 50, ...(cpuPg ? { pg: cpuPg } : {}), dbPrefix: cfg.dbPrefix, log })),
    );
  }
  await cpuPg?.end();

  // 9. memory and start of the all-in-one process (`make run`), on its own afterwards.
  if (enabled('9')) rows.push(...(await footprintScenarios({ port: cfg.port + 20, seconds: cfg.footprintSeconds, log })));

  // 10. the audit trail over 10M entries: its own database (bench_audit_trail), seeded once;
  // 10b. its recording rate (BENCH_ONLY=10b runs it alone).
  if (enabled('10') || enabled('10b')) {
    if (env.DIRECTORY_DATABASE_URL) {
      if (enabled('10')) {
        log(`\n10. audit trail over ${cfg.auditRows.toLocaleString('en')} entries`);
        const u = new URL(pgUrl);
        u.pathname = `/${cfg.dbPrefix}audit_trail`;
        rows.push(await auditScenario(u.toString(), cfg.auditRows, cfg.seconds, (s) => log(`   ${s}`)));
      }
      log('\n10b. audit trail recording rate');
      const rates: ScenarioRow[] = [];
      for (let i = 0; i < cfg.runs; i++) rates.push(await auditRecordingScenario(pgUrl, env.NATS_URL, 20_000, (s) => log(`   ${s}`)));
      rows.push(rates.sort((a, b) => a.ratio - b.ratio)[Math.floor(rates.length / 2)]!);
    } else {
      log('10. audit trail: needs the external PostgreSQL (skipped)');
    }
  }

  // 12. outgoing webhooks (BENCH_ONLY=webhooks runs it alone; `node bench/dist/webhooks.js` too).
  if (enabled('webhooks')) {
    if (env.DIRECTORY_DATABASE_URL) {
      log('\n12. outgoing webhooks');
      rows.push(...(await webhookScenarios({ pgUrl, natsUrl: env.NATS_URL, runs: cfg.runs, events: 2_000, seconds: 20, concurrency: 16 })));
    } else {
      log('12. webhooks: needs the external PostgreSQL (skipped)');
    }
  }

  // 13. bulk import (BENCH_ONLY=import runs it alone; `node bench/dist/user-import.js` too).
  if (enabled('import')) {
    if (env.DIRECTORY_DATABASE_URL) {
      log('\n13. bulk import of users with bcrypt hashes');
      rows.push(...(await importScenario({ pgUrl, users: cfg.importUsers, runs: cfg.runs })));
    } else {
      log('13. bulk import: needs the external PostgreSQL (skipped)');
    }
  }

  const date = new Date().toISOString().slice(0, 10);
  const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'cpu'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const table = [
    `Measured ${date} on ${machine}; PostgreSQL ${own ? `the bench's own (${own.describe})` : env.DIRECTORY_DATABASE_URL ? 'external' : 'embedded'}, bus ${env.NATS_URL ? 'NATS JetStream' : 'in-process'}; median of ${cfg.runs} runs of ${cfg.seconds} s.`,
    '',
    '| scenario | measured | baseline (same run) | ratio | target | met |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.scenario} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.target} | ${r.met ? 'yes' : 'no'} |`),
  ].join('\n');
  log(`\n${table}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `${date}.json`), JSON.stringify({ date, machine, rows }, null, 2));
  if (cfg.only) {
    log('BENCH_ONLY set: bench/README.md is left as it is (a full run writes it)');
    return;
  }
  const readme = join(ROOT, 'bench', 'README.md');
  const text = readFileSync(readme, 'utf8');
  writeFileSync(readme, text.replace(/<!-- results:start -->[\s\S]*<!-- results:end -->/, `<!-- results:start -->\n${table}\n<!-- results:end -->`));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

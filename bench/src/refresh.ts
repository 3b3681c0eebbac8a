#!/usr/bin/env node
/**
 * Refresh rotations (scenario 3) on their own: `node bench/dist/refresh.js`. Starts the system as
 * `make bench` does (one process per service with the external PostgreSQL and NATS, else the
 * all-in-one) on its own databases (`refbench_*`, so a concurrent `make bench` is not disturbed),
 * and the bare pipeline, then alternates a bare run and a refresh run, `BENCH_RUNS` times, so each
 * ratio compares two neighbouring windows of a noisy machine. Prints each pair, the medians and
 * the load average. Each refresh worker rotates its own chain, as in scenario 3.
 *
 * Profiling: `node --cpu-prof --cpu-prof-dir=/tmp/prof bench/dist/refresh.js` (the forked
 * processes inherit the flag; `BENCH_BARE=false` leaves the bare pipeline out).
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '@iam/platform';
import { Client } from 'pg';
import { children, cpuByPart, cpuPerOp, describeCpu, idleRates } from './cpu';
import { type LoadResult, cannon, closedLoop, jsonClient, median, r1, r2 } from './load';
import { AUTH_LIMITS_LIFTED, ROOT, argon2BaselineCpu, freePorts, grpcPortsEnv, startChild, startSystem } from './system';

const cfg = readConfig(process.env, (e) => ({
  seconds: e.int('BENCH_SECONDS', { default: 8, min: 1 }),
  runs: e.int('BENCH_RUNS', { default: 3, min: 1 }),
  connections: e.int('BENCH_CONNECTIONS', { default: 16, min: 1 }),
  bare: e.bool('BENCH_BARE', { default: true }),
  // http (default, as scenario 3 of run.ts): node:http with a keep-alive agent (load.ts jsonClient);
  // fetch: undici, ~2 ms CPU per request here, on the same cores, about ten times that.
  client: e.string('BENCH_CLIENT', { default: 'http' }),
  pgUrl: e.string('BENCH_PG_URL', { default: 'postgres://postgres@127.0.0.1:5432/postgres' }),
  natsUrl: e.optionalString('BENCH_NATS_URL') ?? 'nats://127.0.0.1:4222',
  // refresh (scenario 3, against the bare pipeline) or login (scenario 1, against raw argon2id
  // verifications at the same parameters and concurrency, in a child process).
  op: e.oneOf('BENCH_OP', ['refresh', 'login'] as const, { default: 'refresh' }),
}));

const ADMIN = { email: 'bench-admin@example.com', password: 'Bench-Passw0rd!' };
const log = (s: string) => process.stdout.write(`${s}\n`);
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

async function main(): Promise<void> {
  const [port, barePort] = await freePorts(2);
  const env: Record<string, string> = {
    GATEWAY_PROFILES: 'full',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ...AUTH_LIMITS_LIFTED,
    EMAIL_ACTION_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DATA_DIR: join(ROOT, '.data', 'bench-refresh'),
    EMBEDDED_PG_PORT: '54349',
    ...(await grpcPortsEnv()),
  };
  const admin = new Client({ connectionString: cfg.pgUrl });
  await admin.connect();
  // A fresh identity database per run (tokens); the others are kept and migrated.
  await admin.query('DROP DATABASE IF EXISTS refbench_identity WITH (FORCE)');
  for (const s of ['directory', 'identity', 'notification', 'commerce', 'audit']) {
    const u = new URL(cfg.pgUrl);
    u.pathname = `/refbench_${s}`;
    env[`${s.toUpperCase()}_DATABASE_URL`] = u.toString();
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [`refbench_${s}`]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE refbench_${s}`);
  }
  env.NATS_URL = cfg.natsUrl;

  const started: Array<() => unknown> = [() => admin.end()];
  try {
    const sys = await startSystem(env, port!, true);
    started.push(() => sys.stop());
    const bare = cfg.bare && cfg.op === 'refresh' ? await startChild('bare.js', [String(barePort), env.DIRECTORY_DATABASE_URL!]) : undefined;
    if (bare) started.push(() => bare.kill());
    const post = async (path: string, body: unknown, token?: string) => {
      const r = await fetch(sys.base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      return { status: r.status, json: (await r.json().catch(() => null)) as Record<string, unknown> };
    };
    const adminToken = (await post('/api/v1/auth/generate-jwt', ADMIN)).json.token as string;
    const user = { firstName: 'Bench', lastName: 'User', email: `bench-${Date.now()}@example.com`, password: 'Bench-Passw0rd!' };
    const userId = (await post('/api/v1/users', user, adminToken)).json.id as string;
    const chains: string[] = [];
    for (let i = 0; i < cfg.connections; i++) chains.push((await post('/api/v1/auth/generate-jwt', { email: user.email, password: user.password })).json.refreshToken as string);

    const http = jsonClient(sys.base, cfg.connections);
    const postHttp = (path: string, body: unknown) => http.call('POST', path, body);
    const refreshPost = cfg.client === 'http' ? postHttp : post;
    started.push(() => http.close());
    const refreshRun = (seconds = cfg.seconds) =>
      closedLoop(seconds, cfg.connections, async (worker) => {
        const r = await refreshPost('/api/v1/auth/refresh', { refreshToken: chains[worker] });
        if (r.status === 200) chains[worker] = r.json.refreshToken as string;
        return r.status;
      });
    const bareRun = (seconds = cfg.seconds) => cannon({ url: `http://127.0.0.1:${barePort}/users/${userId}`, connections: cfg.connections, duration: seconds });
    // Scenario 1's shape: one hash per core at a time, twice as many clients as cores.
    const cores = availableParallelism();
    const loginRun = (seconds = cfg.seconds) => closedLoop(seconds, 2 * cores, async () => (await postHttp('/api/v1/auth/generate-jwt', { email: user.email, password: user.password })).status);
    // The raw hash's CPU (all the baseline child's threads) per verification, for "beyond the hash".
    const hashCpu: number[] = [];
    const argonRun = async (): Promise<LoadResult> => {
      const a = argon2BaselineCpu(cores, cfg.seconds);
      hashCpu.push(a.cpuMsPerOp);
      return { ok: a.perSecond, non2xx: 0, status429: 0, errors: 0, timeouts: 0, p50: NaN, p95: NaN, p99: NaN };
    };
    const login = cfg.op === 'login';
    const baseRun = login ? argonRun : bareRun;
    const opRun = login ? loginRun : refreshRun;
    const [opName, baseName] = login ? ['login', 'argon2id'] : ['refresh', 'bare'];

    // A short warm-up of what is measured (JIT, pools, prepared statements).
    if (bare) await bareRun(2);
    await opRun(2);

    log(`${opName} vs ${baseName}: ${cfg.runs} × (${cfg.seconds} s ${baseName}, ${cfg.seconds} s ${opName}), ${login ? 2 * cores : cfg.connections} connections, client ${cfg.client}; load ${load()}`);
    const bares: LoadResult[] = [];
    const refreshes: LoadResult[] = [];
    const pids = children();
    // Background CPU at rest (health checks, relay polls) is taken out of each window.
    const idle = await idleRates(admin, pids, 'refbench_', 5);
    const measured = async (run: () => Promise<LoadResult>) => {
      const before = await cpuByPart(admin, pids, 'refbench_');
      const started = performance.now();
      const r = await run();
      return { r, cpu: describeCpu(cpuPerOp(before, await cpuByPart(admin, pids, 'refbench_'), r.ok * cfg.seconds, { rates: idle, seconds: (performance.now() - started) / 1000 })) };
    };
    for (let i = 0; i < cfg.runs; i++) {
      if (bare || login) {
        const b = await measured(baseRun);
        bares.push(b.r);
        log(`  run ${i + 1}: ${baseName} ${r1(b.r.ok)}/s (p99 ${r1(b.r.p99)} ms)${login ? `; ${hashCpu.at(-1)?.toFixed(2)} ms CPU per raw verification` : `; ${b.cpu}`}`);
      }
      const from = process.hrtime.bigint() / 1000n;
      const f = await measured(opRun);
      // The window in the profiles' clock (monotonic µs), to read only these requests from them.
      if (process.execArgv.some((a) => a.startsWith('--cpu-prof'))) log(`  profile window ${from}–${process.hrtime.bigint() / 1000n} µs`);
      refreshes.push(f.r);
      const b = bares[i];
      log(
        `  run ${i + 1}: ${opName} ${r1(f.r.ok)}/s (p50 ${r1(f.r.p50)}, p99 ${r1(f.r.p99)} ms, ${f.r.non2xx} non-2xx, ${f.r.errors} errors)` +
          `${b ? `, ratio ${r2(f.r.ok / b.ok)}` : ''}; load ${load()}; ${f.cpu}`,
      );
    }
    const m = (rs: LoadResult[], k: keyof LoadResult) => median(rs.map((r) => r[k]));
    const summary = {
      op: opName,
      baseline: baseName,
      refresh: { perSecond: r1(m(refreshes, 'ok')), p50: r1(m(refreshes, 'p50')), p99: r1(m(refreshes, 'p99')), non2xx: m(refreshes, 'non2xx') },
      [baseName]: bares.length ? { perSecond: r1(m(bares, 'ok')), p99: r1(m(bares, 'p99')) } : null,
      ratio: bares.length ? r2(median(refreshes.map((f, i) => f.ok / bares[i]!.ok))) : null,
      load: load(),
    };
    log(`median: ${opName} ${summary.refresh.perSecond}/s (p99 ${summary.refresh.p99} ms)${bares.length ? `, ${baseName} ${r1(m(bares, 'ok'))}/s, ratio ${summary.ratio} (median of the pairs)` : ''}; load ${summary.load}`);
    log(JSON.stringify(summary));
  } finally {
    for (const stop of started.reverse()) await stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

/**
 * Idle cost (issue #43): CPU per second and RSS of each process of the system at rest. Starts the
 * split system (one process per service, external PostgreSQL and NATS JetStream) or the
 * all-in-one process (`make run`'s shape: embedded PostgreSQL, in-process bus), waits until it is
 * ready and then `BENCH_IDLE_SETTLE_S` (10) more, and reads each process's utime + stime from
 * /proc/<pid>/stat before and after `BENCH_IDLE_SECONDS` (60) of rest: CPU time, which other jobs
 * on the machine do not bend the way they bend wall time. The embedded PostgreSQL's processes are
 * summed as `postgres`.
 *
 *   node bench/dist/idle.js [split|all-in-one …]   (default: both, one after the other)
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { children, cpuSeconds } from './cpu';
import { AUTH_LIMITS_LIFTED, ROOT, grpcPortsEnv, startSystem } from './system';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_S = Number(process.env.BENCH_IDLE_SETTLE_S ?? 10);
const PORT = Number(process.env.BENCH_IDLE_PORT ?? 18_300);
const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const log = (s: string) => process.stdout.write(`${s}\n`);

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Every descendant of `pid` (the embedded PostgreSQL's server and its workers). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    try {
      for (const task of readdirSync(`/proc/${p}/task`)) {
        for (const c of readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) {
          out.push(c);
          walk(c);
        }
      }
    } catch {
      // gone
    }
  };
  walk(pid);
  return out;
}

interface Sample {
  readonly cpu: Map<string, number>;
  readonly rss: Map<string, number>;
}

function sample(): Sample {
  const cpu = new Map<string, number>();
  const rss = new Map<string, number>();
  for (const [name, pid] of children()) {
    cpu.set(name, cpuSeconds(pid));
    rss.set(name, rssMiB(pid));
    const pg = descendants(pid);
    if (pg.length > 0) {
      cpu.set('postgres', (cpu.get('postgres') ?? 0) + pg.reduce((s, p) => s + cpuSeconds(p), 0));
      rss.set('postgres', (rss.get('postgres') ?? 0) + pg.reduce((s, p) => s + rssMiB(p), 0));
    }
  }
  return { cpu, rss };
}

async function measure(shape: 'split' | 'all-in-one'): Promise<void> {
  const split = shape === 'split';
  const prefix = `idle_${Date.now()}_`;
  const env: Record<string, string> = {
    ...AUTH_LIMITS_LIFTED,
    ...(await grpcPortsEnv()),
    GATEWAY_PROFILES: 'full',
    ADMIN_EMAIL: 'idle-admin@example.com',
    ADMIN_PASSWORD: 'Idle-Passw0rd!',
    EMAIL_ACTION_BASE_URL: 'http://app.bench',
    PUBLIC_URL: `http://127.0.0.1:${PORT}`,
    IDENTITY_OP_PORT: String(PORT + 13),
    IDENTITY_OP_URL: `http://127.0.0.1:${PORT + 13}`,
    DATA_DIR: join(ROOT, '.data', 'bench-idle'),
    EMBEDDED_PG_PORT: '54359',
  };
  if (split) {
    for (const s of ['directory', 'identity', 'notification', 'commerce', 'audit']) {
      const u = new URL(PG);
      u.pathname = `/${prefix}${s}`;
      env[`${s.toUpperCase()}_DATABASE_URL`] = u.toString();
    }
    env.NATS_URL = NATS;
    // Fresh databases each run; the all-in-one keeps these secrets in its data directory instead.
    env.EMAIL_ACTION_KEY = randomBytes(32).toString('base64');
    env.WEBHOOK_SECRET_KEY = randomBytes(32).toString('base64');
    env.JWT_KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64');
  } else {
    for (const k of Object.keys(process.env)) if (k.endsWith('_DATABASE_URL') || k === 'NATS_URL') delete process.env[k];
  }
  const t0 = Date.now();
  const sys = await startSystem(env, PORT, split);
  log(`${shape}: ready in ${Date.now() - t0} ms; resting ${SETTLE_S} s, then measuring ${SECONDS} s`);
  try {
    await new Promise((r) => setTimeout(r, SETTLE_S * 1_000));
    const before = sample();
    const started = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1_000));
    const after = sample();
    const elapsed = (performance.now() - started) / 1_000;
    for (const [name, cpu] of after.cpu) {
      const ms = ((cpu - (before.cpu.get(name) ?? 0)) * 1_000) / elapsed;
      log(`  ${name.padEnd(14)} ${ms.toFixed(1).padStart(6)} ms CPU/s   RSS ${after.rss.get(name)!.toFixed(0).padStart(4)} MiB`);
    }
  } finally {
    await sys.stop();
    if (split) {
      const c = new Client({ connectionString: PG });
      await c.connect();
      for (const s of ['directory', 'identity', 'notification', 'commerce', 'audit']) await c.query(`DROP DATABASE IF EXISTS "${prefix}${s}" WITH (FORCE)`);
      await c.end();
    }
  }
}

async function main(): Promise<void> {
  const shapes = process.argv.slice(2).filter((a): a is 'split' | 'all-in-one' => a === 'split' || a === 'all-in-one');
  log(`load: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  for (const shape of shapes.length > 0 ? shapes : (['split', 'all-in-one'] as const)) await measure(shape);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

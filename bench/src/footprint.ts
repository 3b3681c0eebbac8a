/**
 * Scenario 9: the all-in-one process as `make run` starts it (embedded PostgreSQL, in-process
 * bus), on a warm install (its data directory made by a first start that is not measured):
 *   9a. cold start of the process to /health/ready 200 (median of three starts), target ≤ 5 s;
 *   9b. its RSS after a mixed load of `seconds` ÷ its idle RSS after a warm-up, target ≤ 1.2.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScenarioRow, closedLoop, median, r1, r2 } from './load';
import { AUTH_LIMITS_LIFTED, ROOT, forkAllInOne, waitReady } from './system';

const ADMIN = { email: 'footprint-admin@example.com', password: 'Footprint-Passw0rd!' };

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function spawnAllInOne(port: number): ChildProcess {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.endsWith('_DATABASE_URL') || k === 'NATS_URL') delete env[k];
  return forkAllInOne({
    env: {
      ...env,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATA_DIR: join(ROOT, '.data', 'bench-footprint'),
      EMBEDDED_PG_PORT: '54349',
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      ...AUTH_LIMITS_LIFTED,
      // Other make run processes may hold the default ports.
      IDENTITY_GRPC_PORT: String(port + 1),
      DIRECTORY_GRPC_PORT: String(port + 2),
      NOTIFICATION_GRPC_PORT: String(port + 3),
      COMMERCE_GRPC_PORT: String(port + 4),
      IDENTITY_GRPC_TARGET: `127.0.0.1:${port + 1}`,
      DIRECTORY_GRPC_TARGET: `127.0.0.1:${port + 2}`,
      NOTIFICATION_GRPC_TARGET: `127.0.0.1:${port + 3}`,
      COMMERCE_GRPC_TARGET: `127.0.0.1:${port + 4}`,
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Mixed traffic: reads by id and lists, searches, refresh rotations, updates and a few logins. */
async function mixedLoad(base: string, seconds: number): Promise<number> {
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const r = await fetch(base + path, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    return { status: r.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const login = await call('POST', '/api/v1/auth/generate-jwt', ADMIN);
  const token = login.json.token as string;
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const u = await call('POST', '/api/v1/users', { firstName: 'Foot', lastName: `Print${i}`, email: `footprint-${Date.now()}-${i}@example.com`, password: 'Footprint-Passw0rd!' }, token);
    ids.push(u.json.id as string);
  }
  const chains = Array.from({ length: 8 }, () => login.json.refreshToken as string);
  for (let w = 0; w < 8; w++) chains[w] = (await call('POST', '/api/v1/auth/generate-jwt', ADMIN)).json.refreshToken as string;
  let n = 0;
  const r = await closedLoop(seconds, 8, async (worker) => {
    const i = n++;
    const id = ids[i % ids.length]!;
    switch (i % 10) {
      case 0:
        return (await call('GET', `/api/v1/users?q=print${i % 20}&pageSize=10`, undefined, token)).status;
      case 1:
        return (await call('GET', `/api/v1/users?page=${1 + (i % 3)}&pageSize=25`, undefined, token)).status;
      case 2:
        return (await call('PUT', `/api/v1/users/${id}`, { lastName: `Print${i}` }, token)).status;
      case 3: {
        const res = await call('POST', '/api/v1/auth/refresh', { refreshToken: chains[worker] });
        if (res.status === 200) chains[worker] = res.json.refreshToken as string;
        return res.status;
      }
      case 4:
        return i % 50 === 4 ? (await call('POST', '/api/v1/auth/generate-jwt', ADMIN)).status : (await call('GET', '/api/v1/roles?pageSize=10', undefined, token)).status;
      default:
        return (await call('GET', `/api/v1/users?id=${id}`, undefined, token)).status;
    }
  });
  return r.ok;
}

export async function footprintScenarios(opts: { port: number; seconds: number; log: (s: string) => void }): Promise<ScenarioRow[]> {
  const { port, log } = opts;
  const base = `http://127.0.0.1:${port}`;
  log('\n9. all-in-one (make run shape): cold start and memory');
  // The install gets warm: data directory, database, migrations, administrator.
  let child = spawnAllInOne(port);
  await waitReady(base, [child], 300_000, 50);
  await stop(child);
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    child = spawnAllInOne(port);
    await waitReady(base, [child], 120_000, 20);
    starts.push(performance.now() - t);
    if (i < 2) await stop(child);
  }
  const start = median(starts);
  log(`   cold start to ready: ${starts.map((s) => Math.round(s)).join(', ')} ms`);
  try {
    await mixedLoad(base, 10);
    await new Promise((r) => setTimeout(r, 5_000));
    const idle = rssMiB(child.pid!);
    const rate = await mixedLoad(base, opts.seconds);
    await new Promise((r) => setTimeout(r, 5_000));
    const after = rssMiB(child.pid!);
    log(`   RSS idle ${r1(idle)} MiB, after ${opts.seconds} s of mixed load (${r1(rate)} ok/s) ${r1(after)} MiB`);
    return [
      { scenario: '9a. make run (all-in-one, embedded PostgreSQL) cold start to ready, warm install', value: `${Math.round(start)} ms (${starts.map((s) => Math.round(s)).join(', ')})`, baseline: '—', ratio: r2(start / 5_000), target: '≤ 5 s', met: start <= 5_000 },
      {
        scenario: `9b. all-in-one RSS after ${opts.seconds} s of mixed load ÷ idle RSS after warm-up`,
        value: `${r1(after)} MiB (${r1(rate)} ok/s)`,
        baseline: `${r1(idle)} MiB`,
        ratio: r2(after / idle),
        target: '≤ 1.2',
        met: after / idle <= 1.2,
      },
    ];
  } finally {
    await stop(child);
  }
}

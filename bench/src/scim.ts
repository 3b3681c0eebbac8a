#!/usr/bin/env node
/**
 * SCIM at the directory (issue #42): the organization's SCIM server as the gateway's gRPC call
 * reaches it (`ScimServer.handle`: the token's hash looked up, the filter parsed and translated,
 * the query, the document), without the gateway and gRPC in front. A fresh database
 * (BENCH_SCIM_DB_PREFIX + random) is migrated and seeded with BENCH_SCIM_USERS provisioned users
 * in one organization, beside a second organization of as many (the organization predicate has
 * rows to skip). Measured:
 * - `GET /Users?filter=userName eq "<a random member's userName, in another case>"`, 1 client
 *   then 4, BENCH_SCIM_LOOKUPS each: p50/p95/p99 (target p95 ≤ 50 ms; exit 1 above it);
 * - one PATCH adding BENCH_SCIM_GROUP (1,000) members to a group, and one removing them all.
 * The database is dropped at the end.
 *
 *   node bench/dist/scim.js   (BENCH_PG_URL, BENCH_SCIM_USERS, BENCH_SCIM_LOOKUPS, BENCH_SCIM_GROUP)
 */
import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createLogger, openDatabase, readConfig } from '@iam/platform';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { r1 } from './load';
import { ROOT } from './system';

const cfg = readConfig(process.env, (e) => ({
  url: e.string('BENCH_PG_URL', { default: 'postgres://postgres@127.0.0.1:5432/postgres' }),
  prefix: e.string('BENCH_SCIM_DB_PREFIX', { default: 'scim_bench_' }),
  users: e.int('BENCH_SCIM_USERS', { default: 100_000, min: 100 }),
  lookups: e.int('BENCH_SCIM_LOOKUPS', { default: 2_000, min: 1 }),
  group: e.int('BENCH_SCIM_GROUP', { default: 1_000, min: 1 }),
}));

const TARGET_P95_MS = 50;
const TOKEN = `iamscim_bench${randomUUID().replace(/-/g, '')}`;

interface ScimServer {
  handle(req: { organizationId: string; token: string; method: string; path: string; query: Record<string, string>; body: string; baseUrl: string }): Promise<{ status: number; body?: Record<string, unknown> }>;
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function seed(ds: DataSource, orgs: string[], connection: string): Promise<void> {
  for (const org of orgs) await ds.query(`INSERT INTO organizations (id, name, slug, slug_skeleton) VALUES ($1, 'Bench', $2, $2)`, [org, `bench-${org.slice(0, 8)}`]);
  await ds.query(`INSERT INTO scim_connections (id, organization_id, name, token_hash, created_by) VALUES ($1, $2, 'bench', $3, 'bench')`, [connection, orgs[0], createHash('sha256').update(TOKEN).digest()]);
  const batch = 20_000;
  for (const [i, org] of orgs.entries()) {
    const conn = i === 0 ? connection : randomUUID();
    if (i > 0) await ds.query(`INSERT INTO scim_connections (id, organization_id, name, token_hash, created_by) VALUES ($1, $2, 'other', $3, 'bench')`, [conn, org, createHash('sha256').update(conn).digest()]);
    for (let from = 0; from < cfg.users; from += batch) {
      const n = Math.min(batch, cfg.users - from);
      await ds.query(
        `WITH u AS (
           INSERT INTO users (id, first_name, last_name, email, password_hash)
           SELECT gen_random_uuid(), 'Scim', 'N' || g, 's' || $3 || '-' || g || '@bench.example', '!no-password' FROM generate_series($1::int, $1::int + $2::int - 1) g
           RETURNING id, email),
         m AS (INSERT INTO organization_members (organization_id, user_id) SELECT $4, id FROM u RETURNING user_id)
         INSERT INTO scim_users (organization_id, user_id, connection_id, user_name, user_name_key, external_id, attributes)
         SELECT $4, u.id, $5, 'User.' || u.email, lower('User.' || u.email), u.id::text, jsonb_build_object('emails', jsonb_build_array(jsonb_build_object('value', u.email, 'type', 'work', 'primary', true)))
           FROM u JOIN m ON m.user_id = u.id`,
        [from, n, i, org, conn],
      );
    }
  }
  for (const t of ['users', 'organization_members', 'scim_users']) await ds.query(`ANALYZE ${t}`);
}

async function lookups(scim: ScimServer, org: string, names: string[], concurrency: number): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        const t0 = process.hrtime.bigint();
        const r = await scim.handle({ organizationId: org, token: TOKEN, method: 'GET', path: '/Users', query: { filter: `userName eq "${name.toUpperCase()}"` }, body: '', baseUrl: `https://bench.example/scim/v2/${org}` });
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (r.status !== 200 || (r.body as { totalResults: number }).totalResults !== 1) throw new Error(`lookup of ${name}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    }),
  );
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const logger = createLogger({ level: 'warn', service: 'bench' });
  const load = createRequire(__filename);
  const dir = (f: string): unknown => load(join(ROOT, 'services/directory/dist', f));
  const { entities, migrations } = dir('infra/schema.js') as { entities: []; migrations: [] };
  const { createDirectoryUseCases } = dir('service.js') as { createDirectoryUseCases: (ds: DataSource, config: unknown) => { scim: ScimServer } };
  const name = `${cfg.prefix}${randomUUID().slice(0, 8)}`;
  const u = new URL(cfg.url);
  u.pathname = `/${name}`;
  const ds = await openDatabase({ url: u.toString(), name: 'directory', entities, migrations, logger });
  try {
    const [org, other, connection] = [randomUUID(), randomUUID(), randomUUID()];
    const t0 = Date.now();
    await seed(ds, [org, other], connection);
    process.stdout.write(`seeded 2 organizations of ${cfg.users} SCIM users in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    const uc = createDirectoryUseCases(ds, { databaseUrl: cfg.url, grpcPort: 0, argon2: { memoryKiB: 8_192, iterations: 1, parallelism: 1 }, hashConcurrency: 1, hashQueueLimit: 8, invitationDays: 7 });
    const rows = await ds.query<Array<{ user_name: string }>>('SELECT user_name FROM scim_users WHERE organization_id = $1 ORDER BY random() LIMIT $2', [org, cfg.lookups]);
    const names = rows.map((r) => r.user_name);
    await lookups(uc.scim, org, names.slice(0, 50), 1); // warm-up
    let worst = 0;
    for (const concurrency of [1, 4]) {
      const times = await lookups(uc.scim, org, names, concurrency);
      const p95 = percentile(times, 95);
      worst = Math.max(worst, p95);
      process.stdout.write(
        `${concurrency} client(s): ${times.length} userName lookups: p50 ${r1(percentile(times, 50))} / p95 ${r1(p95)} / p99 ${r1(percentile(times, 99))} ms; max ${r1(times[times.length - 1]!)} ms (load ${loadavg().map((x) => x.toFixed(1)).join(' ')})\n`,
      );
    }
    // A group of BENCH_SCIM_GROUP members: one PATCH adds them all, one removes them all.
    const base = `https://bench.example/scim/v2/${org}`;
    const group = await uc.scim.handle({ organizationId: org, token: TOKEN, method: 'POST', path: '/Groups', query: {}, body: JSON.stringify({ displayName: 'Bench group' }), baseUrl: base });
    const groupId = String(group.body?.id);
    const members = (await ds.query<Array<{ user_id: string }>>('SELECT user_id FROM scim_users WHERE organization_id = $1 LIMIT $2', [org, cfg.group])).map((r) => ({ value: r.user_id }));
    for (const [op, value] of [['Add', members], ['Remove', members]] as const) {
      const body = JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op, path: 'members', value }] });
      const s = process.hrtime.bigint();
      const r = await uc.scim.handle({ organizationId: org, token: TOKEN, method: 'PATCH', path: `/Groups/${groupId}`, query: {}, body, baseUrl: base });
      if (r.status !== 204) throw new Error(`group PATCH ${op}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      process.stdout.write(`group PATCH ${op} of ${members.length} members: ${r1(Number(process.hrtime.bigint() - s) / 1e6)} ms (body ${body.length} bytes)\n`);
    }
    process.stdout.write(`userName filter p95 ${r1(worst)} ms: ${worst <= TARGET_P95_MS ? 'within' : 'ABOVE'} the ${TARGET_P95_MS} ms target\n`);
    process.exitCode = worst <= TARGET_P95_MS ? 0 : 1;
  } finally {
    await ds.destroy();
    const c = new Client({ connectionString: cfg.url });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 2;
});

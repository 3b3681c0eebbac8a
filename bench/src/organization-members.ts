#!/usr/bin/env node
/**
 * The member list of a 100,000-member organization at the store (issue #41): the directory's own
 * listing (`organizations.listMembers`' store and cursor: `MemberStore.list` with the cursor made
 * and read back by app/listing, as the service does), without the gateway and gRPC in front.
 * A fresh database (BENCH_ORG_DB_PREFIX + random) is migrated and seeded with BENCH_ORG_MEMBERS
 * users, all members of one organization, beside a second organization of as many (so the
 * organization predicate has rows to skip); then BENCH_ORG_WALKS walks, each starting at a random
 * member and following BENCH_ORG_PAGES pages of 25 by cursor, 1 client then 4. Prints p50/p95/p99
 * of pages and fails (exit 1) when p95 is above 50 ms. The database is dropped at the end.
 *
 *   node bench/dist/organization-members.js   (BENCH_PG_URL, BENCH_ORG_MEMBERS, BENCH_ORG_WALKS, BENCH_ORG_PAGES)
 */
import { randomUUID } from 'node:crypto';
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
  prefix: e.string('BENCH_ORG_DB_PREFIX', { default: 'organizations_bench_' }),
  members: e.int('BENCH_ORG_MEMBERS', { default: 100_000, min: 100 }),
  walks: e.int('BENCH_ORG_WALKS', { default: 200, min: 1 }),
  pages: e.int('BENCH_ORG_PAGES', { default: 10, min: 1 }),
}));

const PAGE_SIZE = 25;
const TARGET_P95_MS = 50;

interface MemberStore {
  list(organizationId: string, query: { pageSize: number; page?: number; after?: { values: string[]; id: string } }): Promise<{ items: unknown[]; next?: { values: string[]; id: string }; totalCount: number; totalCountExact: boolean }>;
}
interface Listing {
  openListing(c: string, r: { query: { page: number; pageSize: number; includeDeleted: boolean }; sort: string; cursor: string; filters?: Record<string, string> }): { query: { pageSize: number; page: number; after?: { values: string[]; id: string } } };
  closeListing(l: unknown, p: unknown): { nextCursor: string };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function seed(ds: DataSource, orgs: string[]): Promise<void> {
  for (const org of orgs) await ds.query(`INSERT INTO organizations (id, name, slug, slug_skeleton) VALUES ($1, 'Bench', $2, $2)`, [org, `bench-${org.slice(0, 8)}`]);
  // Users and memberships in batches, each membership a microsecond apart (the order of joining).
  const batch = 20_000;
  for (const [i, org] of orgs.entries()) {
    for (let from = 0; from < cfg.members; from += batch) {
      const n = Math.min(batch, cfg.members - from);
      await ds.query(
        `WITH u AS (
           INSERT INTO users (id, first_name, last_name, email, password_hash)
           SELECT gen_random_uuid(), 'Member', 'N' || g, 'm' || $3 || '-' || g || '@bench.example', 'x' FROM generate_series($1::int, $1::int + $2::int - 1) g
           RETURNING id)
         INSERT INTO organization_members (organization_id, user_id, created_at)
         SELECT $4, id, now() - (row_number() OVER ()) * interval '1 microsecond' FROM u`,
        [from, n, i, org],
      );
    }
  }
  await ds.query('ANALYZE users');
  await ds.query('ANALYZE organization_members');
}

async function walk(store: MemberStore, listing: Listing, org: string, starts: string[], concurrency: number): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < starts.length) {
        // A cursor positioned at a random member: the listing's own cursor, made by its closeListing.
        let cursor = starts[next++]!;
        for (let p = 0; p < cfg.pages && cursor; p++) {
          const t0 = process.hrtime.bigint();
          const l = listing.openListing('organization-members', { query: { page: 1, pageSize: PAGE_SIZE, includeDeleted: false }, sort: '', cursor, filters: { organizationId: org } });
          const page = await store.list(org, { pageSize: l.query.pageSize, after: l.query.after });
          cursor = listing.closeListing(l, page).nextCursor;
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
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
  const { PgMemberStore } = dir('infra/member-store.js') as { PgMemberStore: new (m: unknown) => MemberStore };
  const listing = dir('app/listing.js') as Listing;
  const name = `${cfg.prefix}${randomUUID().slice(0, 8)}`;
  const u = new URL(cfg.url);
  u.pathname = `/${name}`;
  const ds = await openDatabase({ url: u.toString(), name: 'directory', entities, migrations, logger });
  try {
    const [org, other] = [randomUUID(), randomUUID()];
    const t0 = Date.now();
    await seed(ds, [org, other]);
    process.stdout.write(`seeded 2 organizations of ${cfg.members} members in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    const store = new PgMemberStore(ds.manager);
    // Starting cursors: the listing's own, at random members (their join time and id).
    const rows = await ds.query<Array<{ us: string; user_id: string }>>(
      `SELECT (extract(epoch FROM created_at) * 1000000)::int8::text AS us, user_id FROM organization_members WHERE organization_id = $1 ORDER BY random() LIMIT $2`,
      [org, cfg.walks],
    );
    const first = listing.openListing('organization-members', { query: { page: 1, pageSize: PAGE_SIZE, includeDeleted: false }, sort: '', cursor: '', filters: { organizationId: org } });
    const starts = rows.map((r) => listing.closeListing(first, { items: [], totalCount: cfg.members, totalCountExact: false, next: { values: [r.us], id: r.user_id } }).nextCursor);
    let worst = 0;
    for (const concurrency of [1, 4]) {
      const times = await walk(store, listing, org, starts, concurrency);
      const p95 = percentile(times, 95);
      worst = Math.max(worst, p95);
      process.stdout.write(
        `${concurrency} client(s): ${times.length} pages by cursor: p50 ${r1(percentile(times, 50))} / p95 ${r1(p95)} / p99 ${r1(percentile(times, 99))} ms; max ${r1(times[times.length - 1]!)} ms (load ${loadavg().map((x) => x.toFixed(1)).join(' ')})\n`,
      );
    }
    // The plan of one page by cursor (BENCH_ORG_EXPLAIN): an index range of the organization's members, however deep.
    if (process.env.BENCH_ORG_EXPLAIN === '1') {
      const explaining = {
        query: async (sql: string, params: unknown[]) => {
          const plan = await ds.query<Array<{ 'QUERY PLAN': string }>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
          process.stdout.write(`${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
          return ds.query<unknown>(sql, params);
        },
      };
      const l = listing.openListing('organization-members', { query: { page: 1, pageSize: PAGE_SIZE, includeDeleted: false }, sort: '', cursor: starts[0]!, filters: { organizationId: org } });
      await new PgMemberStore(explaining).list(org, { pageSize: PAGE_SIZE, after: l.query.after });
    }
    process.stdout.write(`member list p95 ${r1(worst)} ms: ${worst <= TARGET_P95_MS ? 'within' : 'ABOVE'} the ${TARGET_P95_MS} ms target\n`);
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

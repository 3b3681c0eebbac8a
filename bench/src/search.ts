#!/usr/bin/env node
/**
 * The user search at the store (issue #12 item 4/6): the directory's own `users.list({ q })` (the
 * code the service runs for GET /api/v1/users?q=), over the seeded bench database, without the
 * gateway and gRPC in front. Terms of 3–6 characters cut at random positions from real rows
 * (first names, last names, whole emails: some cross a '.' or an '@'), pages of 25 at offset 0
 * and some deep ones up to offset 10,000; 1 client, then 4 concurrent clients. Prints
 * p50/p95/p99 per run and the slowest searches.
 *
 *   node bench/dist/search.js            (BENCH_SEARCH_URL, BENCH_SEARCH_TERMS, BENCH_SEARCH_SEED,
 *                                          BENCH_SEARCH_SEED_USERS: seed that many users first,
 *                                          BENCH_SEARCH_STORES: another build of the directory's
 *                                          infra/stores.js, for before/after runs on one database)
 *
 * BENCH_SEARCH_MODE=cursor (issue #25 item 6): each search is a first page and then up to
 * BENCH_SEARCH_CURSOR_PAGES pages by cursor (the directory's listing: cursor made and read
 * back, as the service does), timed apart; p95 of first pages and of cursor pages, 1 and 4
 * clients. BENCH_PG=own runs it on the bench's own PostgreSQL (own-pg.ts: started, migrated and
 * seeded here; BENCH_PG_PORT, BENCH_PG_SHARED_BUFFERS), BENCH_SEARCH_DB names the database.
 *
 * The directory is loaded from its build (services/directory/dist), as the bench starts the
 * services from theirs: the bench does not depend on the directory package.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { createLogger, openDatabase, readConfig } from '@iam/platform';
import { Client } from 'pg';
import { r1 } from './load';
import { startOwnPg } from './own-pg';
import { seedUsers } from './seed';
import { ROOT } from './system';

const cfg = readConfig(process.env, (e) => ({
  url: e.string('BENCH_SEARCH_URL', { default: 'postgres://postgres@127.0.0.1:5432/bench_directory' }),
  terms: e.int('BENCH_SEARCH_TERMS', { default: 300, min: 10 }),
  seed: e.int('BENCH_SEARCH_SEED', { default: 12, min: 1 }),
  seedUsers: e.int('BENCH_SEARCH_SEED_USERS', { default: 0, min: 0 }),
  verbose: e.bool('BENCH_SEARCH_VERBOSE', { default: false }),
  stores: e.optionalString('BENCH_SEARCH_STORES') ?? join(ROOT, 'services/directory/dist/infra/stores.js'),
  mode: e.string('BENCH_SEARCH_MODE', { default: 'offset' }),
  cursorPages: e.int('BENCH_SEARCH_CURSOR_PAGES', { default: 8, min: 1 }),
  pg: e.string('BENCH_PG', { default: 'default' }),
  pgPort: e.port('BENCH_PG_PORT', { default: 55432 }),
  pgSharedBuffers: e.string('BENCH_PG_SHARED_BUFFERS', { default: '1GB' }),
  db: e.string('BENCH_SEARCH_DB', { default: 'bench_directory' }),
}));

const PAGE_SIZE = 25;
/** Deep pages: offsets a user paging through results could reach (the target's bound is 10,000). */
const DEEP_OFFSETS = [1_000, 2_500, 5_000, 10_000];

export interface Search {
  q: string;
  page: number;
}

interface ListQuery {
  q?: string;
  page: number;
  pageSize: number;
  includeDeleted: boolean;
}
interface StorePage {
  items: readonly unknown[];
  totalCount: number;
  totalCountExact: boolean;
}
interface UserList {
  list(query: ListQuery): Promise<StorePage>;
}
/** The directory's listing (app/listing.js): cursors made and read as the service does. */
interface Listing {
  openListing(collection: 'users', r: { query: ListQuery; sort: string; cursor: string }): { query: ListQuery };
  closeListing(l: { query: ListQuery }, p: StorePage): { items: readonly unknown[]; totalCount: number; nextCursor: string };
}

/** A small deterministic generator, so every run (before and after a change) searches the same terms. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` searches from real rows (seeded users picked by their phone number, deterministic):
 * a third cut from first names, a third from last names, a third from whole emails (so across
 * '.' and '@' too), 3–6 characters; one in five asks a deep page (offset 1,000–10,000).
 */
export async function searches(url: string, count: number, seed: number): Promise<Search[]> {
  const rnd = mulberry32(seed);
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const [{ n }] = (await c.query(`SELECT count(*)::int AS n FROM users WHERE phone > 15550000000`)).rows as [{ n: number }];
    const picks = Array.from({ length: count }, () => 15550000001 + Math.floor(rnd() * n));
    const rows = (await c.query(`SELECT phone::text, first_name, last_name, email FROM users WHERE phone = ANY($1::bigint[])`, [picks])).rows as Array<Record<string, string>>;
    const byPhone = new Map(rows.map((r) => [r.phone!, r]));
    return picks.map((phone, i) => {
      const r = byPhone.get(String(phone))!;
      const field = [r.first_name!, r.last_name!, r.email!][i % 3]!;
      const len = Math.min(field.length, 3 + Math.floor(rnd() * 4));
      const at = Math.floor(rnd() * (field.length - len + 1));
      const deep = rnd() < 0.2 ? DEEP_OFFSETS[Math.floor(rnd() * DEEP_OFFSETS.length)]! : 0;
      return { q: field.slice(at, at + len), page: deep / PAGE_SIZE + 1 };
    });
  } finally {
    await c.end();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Timed extends Search {
  ms: number;
  items: number;
  totalCount: number;
}

/** Every search once, `concurrency` clients taking the next one in turn. */
async function run(users: UserList, list: Search[], concurrency: number): Promise<Timed[]> {
  const out: Timed[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < list.length) {
        const s = list[next++]!;
        const t0 = process.hrtime.bigint();
        const page = await users.list({ q: s.q, page: s.page, pageSize: PAGE_SIZE, includeDeleted: false });
        out.push({ ...s, ms: Number(process.hrtime.bigint() - t0) / 1e6, items: page.items.length, totalCount: page.totalCount });
      }
    }),
  );
  return out;
}

interface CursorTimed {
  q: string;
  /** 0: the first page; n: the nth page by cursor. */
  depth: number;
  ms: number;
}

/** Each search's first page, then its pages by cursor (up to `pages`), `concurrency` clients taking the next search in turn. */
async function runCursor(users: UserList, listing: Listing, list: Search[], concurrency: number, pages: number): Promise<CursorTimed[]> {
  const out: CursorTimed[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < list.length) {
        const s = list[next++]!;
        let cursor = '';
        for (let depth = 0; depth <= pages; depth++) {
          const t0 = process.hrtime.bigint();
          const l = listing.openListing('users', { query: { q: s.q, page: 1, pageSize: PAGE_SIZE, includeDeleted: false }, sort: '', cursor });
          const page = listing.closeListing(l, await users.list(l.query));
          out.push({ q: s.q, depth, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
          if (page.nextCursor === '') break;
          cursor = page.nextCursor;
        }
      }
    }),
  );
  return out;
}

function reportCursor(label: string, timed: CursorTimed[]): { first: number; cursor: number; all: number } {
  const sorted = (xs: CursorTimed[]) => xs.map((t) => t.ms).sort((a, b) => a - b);
  const all = sorted(timed);
  const first = sorted(timed.filter((t) => t.depth === 0));
  const deep = sorted(timed.filter((t) => t.depth > 0));
  const load = loadavg().map((x) => x.toFixed(1)).join(' ');
  const p95 = { first: percentile(first, 95), cursor: deep.length ? percentile(deep, 95) : 0, all: percentile(all, 95) };
  process.stdout.write(
    `${label}: all p50 ${r1(percentile(all, 50))} / p95 ${r1(p95.all)} / p99 ${r1(percentile(all, 99))} ms; first pages (${first.length}) p50 ${r1(percentile(first, 50))} / p95 ${r1(p95.first)} ms; ` +
      `cursor pages (${deep.length}) p50 ${deep.length ? r1(percentile(deep, 50)) : '-'} / p95 ${deep.length ? r1(p95.cursor) : '-'} ms; max ${r1(all[all.length - 1]!)} ms (load ${load})\n`,
  );
  const slowest = [...timed].sort((a, b) => b.ms - a.ms).slice(0, cfg.verbose ? 30 : 8);
  process.stdout.write(`  slowest: ${slowest.map((t) => `${JSON.stringify(t.q)}#${t.depth} ${r1(t.ms)} ms`).join(', ')}\n`);
  return p95;
}

function report(label: string, timed: Timed[]): void {
  const ms = timed.map((t) => t.ms).sort((a, b) => a - b);
  const first = timed.filter((t) => t.page === 1).map((t) => t.ms).sort((a, b) => a - b);
  const deep = timed.filter((t) => t.page > 1).map((t) => t.ms).sort((a, b) => a - b);
  const load = loadavg().map((x) => x.toFixed(1)).join(' ');
  process.stdout.write(
    `${label}: p50 ${r1(percentile(ms, 50))} ms, p95 ${r1(percentile(ms, 95))} ms, p99 ${r1(percentile(ms, 99))} ms, max ${r1(ms[ms.length - 1]!)} ms` +
      ` (${timed.length} searches; first pages p50 ${r1(percentile(first, 50))} / p95 ${r1(percentile(first, 95))} ms, deep pages p50 ${deep.length ? r1(percentile(deep, 50)) : '-'} / p95 ${deep.length ? r1(percentile(deep, 95)) : '-'} ms; load ${load})\n`,
  );
  const slowest = [...timed].sort((a, b) => b.ms - a.ms).slice(0, cfg.verbose ? 30 : 8);
  process.stdout.write(`  slowest: ${slowest.map((t) => `${JSON.stringify(t.q)}@${(t.page - 1) * PAGE_SIZE} ${r1(t.ms)} ms (${t.totalCount})`).join(', ')}\n`);
}

/** Creates the database when missing. */
async function ensureDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const db = u.pathname.slice(1);
  u.pathname = '/postgres';
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  try {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
    if (!rowCount) await c.query(`CREATE DATABASE "${db.replace(/"/g, '""')}"`);
  } finally {
    await c.end();
  }
}

async function main(): Promise<void> {
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const own = cfg.pg === 'own' ? startOwnPg({ port: cfg.pgPort, sharedBuffers: cfg.pgSharedBuffers, log }) : undefined;
  try {
    await measure(own ? own.url(cfg.db) : cfg.url, own !== undefined, log);
  } finally {
    own?.stop();
  }
}

async function measure(url: string, own: boolean, log: (s: string) => void): Promise<void> {
  if (own) await ensureDatabase(url);
  // The directory's schema and stores, from its build (as the service runs them).
  // A build chosen at run time (BENCH_SEARCH_STORES: another checkout's, for before/after runs).
  const load = createRequire(__filename);
  const { entities, migrations } = load(join(ROOT, 'services/directory/dist/infra/schema.js')) as { entities: []; migrations: [] };
  const { pgStores } = load(cfg.stores) as { pgStores: (m: unknown) => { users: UserList } };
  const logger = createLogger({ level: 'warn', service: 'bench-search' });
  // On the bench's own server the schema is migrated here and the users seeded (once).
  const ds = await openDatabase({ url, name: 'directory', entities, migrations, logger, migrate: own });
  try {
    if (own || cfg.seedUsers > 0) await seedUsers(url, own ? Math.max(cfg.seedUsers, 1_000_000) : cfg.seedUsers, log);
    const users = pgStores(ds.manager).users;
    const list = await searches(url, cfg.terms, cfg.seed);
    if (cfg.mode === 'cursor') {
      const listing = load(join(ROOT, 'services/directory/dist/app/listing.js')) as Listing;
      const firsts = list.map((s) => ({ ...s, page: 1 }));
      const server = await ds.query<Array<{ sb: string; v: string }>>(`SELECT current_setting('shared_buffers') AS sb, current_setting('server_version') AS v`);
      log(`server: ${url.replace(/\/\/[^@]*@/, '//')} (PostgreSQL ${server[0]?.v}, shared_buffers ${server[0]?.sb}); ${firsts.length} searches, each a first page and up to ${cfg.cursorPages} pages by cursor, page size ${PAGE_SIZE}`);
      await runCursor(users, listing, (await searches(url, 100, cfg.seed + 1)).map((s) => ({ ...s, page: 1 })), 4, cfg.cursorPages);
      reportCursor('1 client', await runCursor(users, listing, firsts, 1, cfg.cursorPages));
      reportCursor('4 clients', await runCursor(users, listing, firsts, 4, cfg.cursorPages));
      return;
    }
    const spanning = list.filter((s) => /[.@]/.test(s.q)).length;
    log(`stores: ${cfg.stores}`);
    log(`${list.length} searches (${spanning} across '.' or '@', ${list.filter((s) => s.page > 1).length} deep pages), page size ${PAGE_SIZE}`);
    // Warm the pool, the plans and the caches with other terms of the same kind.
    await run(users, await searches(url, 100, cfg.seed + 1), 4);
    report('1 client', await run(users, list, 1));
    report('4 clients', await run(users, list, 4));
  } finally {
    await ds.destroy();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`search bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

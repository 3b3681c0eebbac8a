#!/usr/bin/env node
/**
 * Scenario 13 (issue #39): bulk import of BENCH_IMPORT_USERS (100,000) users with bcrypt hashes,
 * through the directory's import (`--import FILE`: the file read record by record, batches of 500,
 * each line checked, its hash parsed, users, roles and user.created events written per batch) into
 * a fresh database on the external PostgreSQL. Baseline, in the same run: a bare batched INSERT of
 * the same rows (500 a statement, unnest) into the same table through `pg`. Users/s of each, the
 * median of BENCH_RUNS; the process's RSS while importing (at a fifth of the file and at its end:
 * it must not grow with the file). The hashes are bcrypt-shaped (cost 10, random salt and
 * checksum): the import parses a hash, it never verifies one.
 *
 * `node bench/dist/user-import.js` runs it alone; `make bench` runs it as scenario 13
 * (BENCH_ONLY=import for it alone).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runImport } from '@iam/directory';
import { readConfig } from '@iam/platform';
import { createTestDatabase } from '@iam/platform/testing';
import { Client } from 'pg';
import { type ScenarioRow, median, r1, r2 } from './load';

const C64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const bcryptShaped = () => `$2b$10$${[...randomBytes(53)].map((b) => C64[b % 64]).join('')}`;
const log = (s: string) => process.stdout.write(`${s}\n`);

async function writeFile(file: string, n: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < n; i++) {
    const line = JSON.stringify({ firstName: 'Bench', lastName: `Import ${i}`, email: `import-${i}@bench.example`, externalId: `legacy-${i}`, emailVerified: true, passwordHash: bcryptShaped() });
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** The same rows as the file, inserted bare: 500 a statement, each its own transaction. */
async function bareInsert(url: string, n: number): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const started = performance.now();
    for (let i = 0; i < n; i += 500) {
      const k = Math.min(500, n - i);
      const idx = Array.from({ length: k }, (_, j) => i + j);
      await c.query(
        `INSERT INTO users (id, first_name, last_name, email, password_hash, email_verified, external_id)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::text[])`,
        [idx.map(() => randomUUID()), idx.map(() => 'Bench'), idx.map((x) => `Import ${x}`), idx.map((x) => `import-${x}@bench.example`), idx.map(() => bcryptShaped()), idx.map(() => true), idx.map((x) => `legacy-${x}`)],
      );
    }
    return n / ((performance.now() - started) / 1000);
  } finally {
    await c.end();
  }
}

async function reset(url: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DELETE FROM user_roles WHERE user_id IN (SELECT id FROM users WHERE email LIKE 'import-%@bench.example')`);
    await c.query(`DELETE FROM users WHERE email LIKE 'import-%@bench.example'`);
    await c.query('DELETE FROM outbox_events');
    await c.query('VACUUM ANALYZE users');
  } finally {
    await c.end();
  }
}

export async function importScenario(opts: { pgUrl: string; users: number; runs: number }): Promise<ScenarioRow[]> {
  process.env.IAM_TEST_PG_URL ??= opts.pgUrl;
  const db = await createTestDatabase('bench_import');
  const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const file = join(dir, 'users.ndjson');
  const env = { DIRECTORY_DATABASE_URL: db.url, ARGON2_MEMORY_KIB: '8192', ARGON2_ITERATIONS: '1' };
  try {
    await writeFile(file, opts.users);
    // Once to migrate the empty database (and warm up), then the timed runs.
    await runImport(['--import', file], env, () => undefined);
    const imports: number[] = [];
    const bare: number[] = [];
    const rss = { before: 0, atFifth: 0, atEnd: 0, peak: 0 };
    for (let run = 0; run < opts.runs; run++) {
      await reset(db.url);
      bare.push(await bareInsert(db.url, opts.users));
      await reset(db.url);
      global.gc?.();
      rss.before = process.memoryUsage().rss;
      let lines = 0;
      const sampler = setInterval(() => (rss.peak = Math.max(rss.peak, process.memoryUsage().rss)), 100);
      const started = performance.now();
      const code = await runImport(['--import', file], env, () => {
        lines++;
        if (lines === Math.floor(opts.users / 5)) rss.atFifth = process.memoryUsage().rss;
      });
      const secs = (performance.now() - started) / 1000;
      clearInterval(sampler);
      rss.atEnd = process.memoryUsage().rss;
      if (code !== 0) throw new Error(`the import answered exit code ${code}`);
      imports.push(opts.users / secs);
      log(`   run ${run + 1}: import ${r1(opts.users / secs)} users/s, bare INSERT ${r1(bare.at(-1)!)} rows/s; RSS ${mib(rss.before)} before, ${mib(rss.atFifth)} at 1/5, ${mib(rss.atEnd)} at the end, peak ${mib(rss.peak)}`);
    }
    const ratio = median(imports) / median(bare);
    return [
      {
        scenario: `13. bulk import of ${opts.users.toLocaleString('en')} bcrypt users (--import, batches of 500) users/s ÷ bare batched pg INSERT rows/s`,
        value: `${r1(median(imports))}/s`,
        baseline: `${r1(median(bare))}/s`,
        ratio: r2(ratio),
        target: '≥ 0.3',
        met: ratio >= 0.3,
      },
      {
        scenario: '13r. RSS while importing: at a fifth of the file → at its end (must not grow with the file)',
        value: `${mib(rss.atFifth)} → ${mib(rss.atEnd)} (peak ${mib(rss.peak)})`,
        baseline: `${mib(rss.before)} before`,
        ratio: r2(rss.atEnd / Math.max(1, rss.atFifth)),
        target: '≤ 1.2',
        met: rss.atEnd <= 1.2 * rss.atFifth,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
}

const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;

if (require.main === module) {
  const cfg = readConfig(process.env, (e) => ({
    pgUrl: e.string('BENCH_PG_URL', { default: 'postgres://postgres@127.0.0.1:5432/postgres' }),
    users: e.int('BENCH_IMPORT_USERS', { default: 100_000, min: 1_000 }),
    runs: e.int('BENCH_RUNS', { default: 3, min: 1 }),
  }));
  importScenario(cfg).then(
    (rows) => {
      for (const r of rows) log(`| ${r.scenario} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.target} | ${r.met ? 'yes' : 'no'} |`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

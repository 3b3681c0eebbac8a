/**
 * Seeds the directory database with N synthetic users for the search benchmark (once: a later
 * run reuses them). The search index is dropped during the bulk insert and rebuilt after.
 */
import { Client } from 'pg';

const FIRST = ['James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen', 'Christopher', 'Lisa', 'Daniel', 'Nancy', 'Matthew', 'Betty', 'Anthony', 'Margaret', 'Mark', 'Sandra', 'Donald', 'Ashley', 'Steven', 'Kimberly', 'Paul', 'Emily', 'Andrew', 'Donna', 'Joshua', 'Michelle', 'Aiko', 'Bjorn', 'Chidi', 'Dmitri', 'Esra', 'Farah', 'Goran', 'Hana', 'Ines', 'Jonas'];
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores', 'Okafor', 'Lindqvist', 'Yamamoto', 'Kowalski', 'Haddad', 'Petrov', 'Novak', 'Silva', 'Costa', 'Berg'];

/** The directory's search index (migration 1764400000100), dropped during the bulk insert. */
const SEARCH_INDEX = 'ix_users_search_words';
const SEARCH_INDEX_DDL = `CREATE INDEX ${SEARCH_INDEX} ON users
  USING gin ((translate(lower(first_name || E'\\x1f' || last_name || E'\\x1f' || email), '.@-_+'' ', 'DAHUPQS')) gin_trgm_ops)`;

export async function seedUsers(url: string, target: number, log: (s: string) => void): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const [{ n }] = (await c.query(`SELECT count(*)::int AS n FROM users WHERE phone > 15550000000`)).rows as [{ n: number }];
    if (n >= target) {
      log(`${n} seeded users already present`);
      return;
    }
    const started = Date.now();
    log(`seeding ${target - n} users…`);
    await c.query(`DROP INDEX IF EXISTS ${SEARCH_INDEX}`);
    const hash = '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hzYWx0YmVuY2g$0000000000000000000000000000000000000000000';
    const batch = 100_000;
    for (let start = n + 1; start <= target; start += batch) {
      const end = Math.min(target, start + batch - 1);
      await c.query(
        `INSERT INTO users (id, first_name, last_name, email, phone, password_hash, created_at, updated_at)
         SELECT gen_random_uuid(), ($3::text[])[1 + (hashtext(i::text || 'f') & 2147483647) % $5],
                ($4::text[])[1 + (hashtext(i::text || 'l') & 2147483647) % $6],
                lower(($3::text[])[1 + (hashtext(i::text || 'f') & 2147483647) % $5]) || '.' ||
                  lower(($4::text[])[1 + (hashtext(i::text || 'l') & 2147483647) % $6]) || i || '@' ||
                  (ARRAY['example.com', 'mail.example', 'corp.example', 'bench.example'])[1 + i % 4],
                15550000000 + i, $7, now() - make_interval(secs => $8 - i), now() - make_interval(secs => $8 - i)
           FROM generate_series($1::int, $2::int) AS i`,
        [start, end, FIRST, LAST, FIRST.length, LAST.length, hash, target],
      );
      log(`  ${end} users`);
    }
    await c.query('SET statement_timeout = 0');
    await c.query(SEARCH_INDEX_DDL);
    await c.query(`ALTER INDEX ${SEARCH_INDEX} ALTER COLUMN 1 SET STATISTICS 1000`);
    // Vacuumed as autovacuum would leave a table after a bulk insert (visibility map set): the
    // search walks then read what a settled table costs, not first-read hint-bit writes.
    await c.query('VACUUM ANALYZE users');
    log(`seeded in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    await c.end();
  }
}

/** Search terms of 3–6 characters cut from real rows' names and emails. */
export async function searchTerms(url: string, count: number): Promise<string[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const rows = (await c.query(`SELECT first_name, last_name, email FROM users TABLESAMPLE SYSTEM (1) LIMIT $1`, [count])).rows as Array<Record<string, string>>;
    return rows.map((r, i) => {
      const field = [r.first_name!, r.last_name!, r.email!.split('@')[0]!][i % 3]!;
      const len = Math.min(field.length, 3 + (i % 4));
      const at = Math.floor(Math.random() * (field.length - len + 1));
      return field.slice(at, at + len);
    });
  } finally {
    await c.end();
  }
}

/** `n` users (cheap dummy hashes) for the mail benchmark; returns their emails. */
export async function seedMailUsers(url: string, n: number): Promise<string[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const hash = '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hzYWx0YmVuY2g$0000000000000000000000000000000000000000000';
    await c.query(
      `INSERT INTO users (id, first_name, last_name, email, password_hash)
       SELECT gen_random_uuid(), 'Mail', 'Bench' || i, 'mailbench' || i || '@mail.bench', $2 FROM generate_series(1, $1::int) AS i
       ON CONFLICT DO NOTHING`,
      [n, hash],
    );
    return Array.from({ length: n }, (_, i) => `mailbench${i + 1}@mail.bench`);
  } finally {
    await c.end();
  }
}

/**
 * The migration step that gives a table of names a lookalike-key column, unique among its live
 * rows: names that look alike (UTS #39 skeletons, lookalikeKey) cannot both be live, even when
 * two transactions insert them at once. Shared by the services whose names people match by eye.
 */
import type { QueryRunner } from 'typeorm';
import { lookalikeKey } from '../unicode';
import { quoteIdent } from './index';

export interface LookalikeKeyColumn {
  readonly table: string;
  /** The column the key is computed from (the name). */
  readonly source: string;
  /** The new column, holding lookalikeKey(source). */
  readonly column: string;
  /** The unique index on `column` among live rows. */
  readonly index: string;
  /** SQL condition of a live row (the index's WHERE), e.g. `"deleted_at" IS NULL`. */
  readonly live: string;
}

const BATCH = 5_000;

/**
 * Adds `column` (nullable text), fills it for every row from `source`, then creates the unique
 * index among live rows. Live rows whose key an older live row (created_at, id) already holds
 * were made before the rule existed: they keep NULL, so the index can be built and they stay as
 * they are (a name taking that key still clashes with the older row). Rows are read in keyset
 * batches. Computed here, in Node, with the lookalikeKey of the data this version ships: a later
 * update of that data needs a migration that recomputes the column the same way.
 */
export async function addLookalikeKeyColumn(q: QueryRunner, c: LookalikeKeyColumn): Promise<void> {
  const [table, source, column] = [quoteIdent(c.table), quoteIdent(c.source), quoteIdent(c.column)];
  await q.query(`ALTER TABLE ${table} ADD COLUMN ${column} text`);
  const taken = new Set<string>();
  // created_at travels as text: a JS Date would drop its microseconds and break the keyset.
  let after: { createdAt: string; id: string } | undefined;
  for (;;) {
    const rows = (await q.query(
      `SELECT id, ${source} AS name, (${c.live}) AS live, created_at::text AS created_at FROM ${table}
        ${after ? 'WHERE (created_at, id) > ($1::timestamptz, $2::uuid)' : ''} ORDER BY created_at, id LIMIT ${BATCH}`,
      after ? [after.createdAt, after.id] : [],
    )) as Array<{ id: string; name: string; live: boolean; created_at: string }>;
    if (rows.length === 0) break;
    const keys = rows.map((r) => {
      const key = lookalikeKey(r.name);
      if (!r.live) return key;
      if (taken.has(key)) return null;
      taken.add(key);
      return key;
    });
    await q.query(`UPDATE ${table} t SET ${column} = v.key FROM unnest($1::uuid[], $2::text[]) AS v(id, key) WHERE t.id = v.id`, [rows.map((r) => r.id), keys]);
    const last = rows[rows.length - 1]!;
    after = { createdAt: last.created_at, id: last.id };
  }
  await q.query(`CREATE UNIQUE INDEX ${quoteIdent(c.index)} ON ${table} (${column}) WHERE ${c.live}`);
}

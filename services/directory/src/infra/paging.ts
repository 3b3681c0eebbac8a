/**
 * Lists: the search-text and soft-delete filter, the page's LIMIT/OFFSET, and `totalCount`, exact
 * up to EXACT_COUNT_BOUND matches and the planner's estimate beyond. All SQL is parameterised;
 * search text is LIKE-escaped.
 */
import { escapeLike } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { ListOrder, ListPosition, ListQuery, SortKey } from '../domain/model';

export interface Paged {
  where: string;
  params: unknown[];
}

/** `(a ILIKE $n OR b ILIKE $n …)` for the search text, plus the soft-delete filter. */
export function filters(query: ListQuery, columns: readonly string[], deletedColumn: string | null, params: unknown[] = []): Paged {
  const parts: string[] = [];
  if (deletedColumn && !query.includeDeleted) parts.push(`${deletedColumn} IS NULL`);
  if (query.q) {
    params.push(`%${escapeLike(query.q)}%`);
    const n = params.length;
    parts.push(`(${columns.map((c) => `${c} ILIKE $${n} ESCAPE '\\'`).join(' OR ')})`);
  }
  return { where: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

/**
 * LIMIT and OFFSET of a page: one row more than the page (it says whether another page follows,
 * see `pageOf`); a keyset page (`after`) has no offset.
 */
export function pageParams(query: ListQuery, params: unknown[]): { limit: string; offset: string } {
  params.push(query.pageSize + 1, query.after ? 0 : (query.page - 1) * query.pageSize);
  return { limit: `$${params.length - 1}`, offset: `$${params.length}` };
}

/** The columns of a sort key (the row's id follows them). */
const SORT_COLUMNS: Record<SortKey, readonly string[]> = {
  createdAt: ['created_at'],
  email: ['email'],
  lastName: ['last_name', 'first_name'],
  name: ['name'],
};

/**
 * A row's position text for created_at: microseconds since the epoch (exact; a Date has only
 * milliseconds, and a keyset on rounded values would skip or repeat rows).
 */
export const createdUs = (alias: string): string => `(extract(epoch FROM ${alias}.created_at) * 1000000)::int8::text AS created_us`;

/**
 * The SQL of a list order: ORDER BY, the keyset condition after a position, and a row's
 * position. Columns are named without a table; each method takes the alias to use.
 */
export class KeysetOrder {
  readonly columns: readonly string[];
  readonly desc: boolean;

  constructor(order: ListOrder | undefined) {
    this.columns = SORT_COLUMNS[order?.key ?? 'createdAt'];
    this.desc = order?.desc ?? false;
  }

  /** `a.c1 ASC, a.id ASC` */
  by(alias: string): string {
    const dir = this.desc ? 'DESC' : 'ASC';
    return [...this.columns, 'id'].map((c) => `${alias}.${c} ${dir}`).join(', ');
  }

  /** `a.c1, a.c2` (without the id): what a CTE of ids must carry to be sorted. */
  select(alias: string): string {
    return this.columns.map((c) => `${alias}.${c}`).join(', ');
  }

  /** `(a.c1, a.id) > ($n, $m)`: the rows after `pos` in this order (`<` when descending). */
  after(alias: string, pos: ListPosition, params: unknown[]): string {
    const values = this.columns.map((c, i) => {
      params.push(pos.values[i]);
      return c === 'created_at' ? `(timestamptz 'epoch' + $${params.length}::int8 * interval '1 microsecond')` : `$${params.length}::text`;
    });
    params.push(pos.id);
    values.push(`$${params.length}::uuid`);
    return `(${[...this.columns, 'id'].map((c) => `${alias}.${c}`).join(', ')}) ${this.desc ? '<' : '>'} (${values.join(', ')})`;
  }

  /** A row's position (the row selected with `createdUs` when the order is by created_at). */
  position(r: object): ListPosition {
    const row = r as Readonly<Record<string, unknown>>;
    return { values: this.columns.map((c) => String(row[c === 'created_at' ? 'created_us' : c])), id: String(row.id) };
  }
}

/** Adds the keyset condition of `query.after` (if any) to a WHERE clause. */
export function withAfter(where: string, order: KeysetOrder, alias: string, query: ListQuery, params: unknown[]): string {
  if (!query.after) return where;
  const cond = order.after(alias, query.after, params);
  return where ? `${where} AND ${cond}` : `WHERE ${cond}`;
}

/** The page's rows (fetched one more than the page) and the position after which the next page starts, if there is one. */
export function pageOf<R extends object>(rows: readonly R[], query: ListQuery, order: KeysetOrder): { rows: R[]; next?: ListPosition } {
  if (rows.length <= query.pageSize) return { rows: [...rows] };
  const page = rows.slice(0, query.pageSize);
  return { rows: page, next: order.position(page[page.length - 1]!) };
}

/**
 * Counts exactly up to this many matching rows; beyond, the planner's estimate stands in (an
 * exact count of a term matching a large part of a million users visits every matching row).
 * Counting the first 1,001 matches of a common trigram over a million users visits about 1,000
 * heap rows (10–50 ms on a loaded 2-core machine); the first 10,001 cost ten times that.
 */
export const EXACT_COUNT_BOUND = 1_000;

/** The count of a keyset page, which is not counted: the caller has it from the first page (the cursor). */
export const NOT_COUNTED = { totalCount: 0, totalCountExact: true } as const;

/** The planner's row estimate for `SELECT 1 ${fromWhere}` (no execution). */
export async function estimatedRows(m: EntityManager, fromWhere: string, params: unknown[]): Promise<number> {
  const [plan] = await m.query<[{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }]>(`EXPLAIN (FORMAT JSON) SELECT 1 ${fromWhere}`, params);
  return Math.round(plan['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * `totalCount` of a list: `SELECT count(*)` over at most EXACT_COUNT_BOUND + 1 matching rows;
 * when there are more, the planner's row estimate of the whole query (at least the bound + 1),
 * flagged not exact. `fromWhere` is the query's FROM … WHERE … (parameterised by `params`);
 * `estimate`, when the caller has it already, saves planning the query again.
 */
export async function count(m: EntityManager, fromWhere: string, params: unknown[], estimate?: number): Promise<{ totalCount: number; totalCountExact: boolean }> {
  const [row] = await m.query<[{ n: string }]>(`SELECT count(*) AS n FROM (SELECT 1 ${fromWhere} LIMIT ${EXACT_COUNT_BOUND + 1}) bounded`, params);
  const n = Number(row.n);
  if (n <= EXACT_COUNT_BOUND) return { totalCount: n, totalCountExact: true };
  return { totalCount: Math.max(estimate ?? (await estimatedRows(m, fromWhere, params)), EXACT_COUNT_BOUND + 1), totalCountExact: false };
}

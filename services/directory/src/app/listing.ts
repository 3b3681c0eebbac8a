/**
 * Keyset pages of the collections (DESIGN §4): the `sort` and `cursor` of a list call, and the
 * `nextCursor` of its answer.
 *
 * A cursor is `base64url(JSON state) "." base64url(check)`: the state names the order, a digest of
 * the query it was made for (collection, q, includeDeleted, the links' ends, the order), the page
 * number, the count of the first page and the position of the last row given out; the check is
 * SHA-256 over the state under a fixed label, cut to 16 bytes. Every field is range-checked on
 * the way in. The check is not a secret: it turns any edited byte into a 400 rather than a
 * different position, and a forged cursor could only name a position in a list its caller may
 * read anyway (the same rows as `page`), so nothing is gained by forging one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '@iam/platform';
import { type Collection, LIST_SORTS, type ListOrder, type ListPosition, type ListQuery, type Page, type SortKey } from '../domain/model';
import { PAGE_MAX } from '../domain/rules';

const CURSOR_VERSION = 1;
const CHECK_LABEL = 'iam.directory.list-cursor.v1\u0000';
const CHECK_BYTES = 16;
/** A cursor longer than this was not given out (the longest position: a 320-character email, or two 100-character names, escaped). */
export const CURSOR_MAX_LENGTH = 2_048;
/** Counts a cursor may carry: a count is at most the rows of a table. */
const COUNT_MAX = Number.MAX_SAFE_INTEGER;
/** Key values a position may hold: the longest column (email 320), with room to spare. */
const VALUE_MAX_LENGTH = 400;
/** created_at in microseconds since the epoch: years 1 to 9999 (what PostgreSQL's interval arithmetic and a timestamp hold). */
const US_MIN = -62_135_596_800_000_000n;
const US_MAX = 253_402_300_799_999_999n;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CURSOR_RE = /^([A-Za-z0-9_-]{1,2000})\.([A-Za-z0-9_-]{22})$/;
/** Values per sort key: lastName orders by last name, then first name. */
const KEY_VALUES: Record<SortKey, number> = { createdAt: 1, email: 1, lastName: 2, name: 1 };

/** The list call as it arrives (gRPC ListQuery, after checkListQuery's checks of page, pageSize and q). */
export interface ListRequest {
  readonly query: ListQuery;
  /** The raw `sort` ('' = the default) and `cursor` ('' = none). */
  readonly sort: string;
  readonly cursor: string;
  /** The links' ends, part of what a cursor is bound to. */
  readonly filters?: Readonly<Record<string, string | undefined>>;
}

/** A list call resolved: the store's query, and what its answer needs to make the next cursor. */
export interface Listing {
  readonly query: ListQuery;
  readonly orderText: string;
  readonly bind: string;
  /** From the cursor: its page's number and the first page's count. */
  readonly carried?: { readonly page: number; readonly totalCount: number; readonly totalCountExact: boolean };
}

export interface ListAnswer<T> {
  readonly items: readonly T[];
  readonly totalCount: number;
  readonly totalCountExact: boolean;
  readonly page: number;
  /** '' on the last page. */
  readonly nextCursor: string;
}

const invalid = (field: string, message: string, detail = 'The paging or search parameters are not valid.') => AppError.validation(detail, [{ field, message }]);

/** `createdAt`, `-name`, …: one of the collection's sort keys, '-' first for descending; '' = the default. */
export function parseSort(collection: Collection, sort: string): ListOrder {
  const keys: readonly SortKey[] = LIST_SORTS[collection];
  if (sort === '') return { key: keys[0]!, desc: false };
  const desc = sort.startsWith('-');
  const key = keys.find((k) => k === (desc ? sort.slice(1) : sort));
  if (!key) throw invalid('sort', `must be one of ${keys.flatMap((k) => [k, `-${k}`]).join(', ')}`);
  return { key, desc };
}

const orderText = (o: ListOrder): string => `${o.desc ? '-' : ''}${o.key}`;

function digest(collection: Collection, query: ListQuery, order: string, filters: Readonly<Record<string, string | undefined>>): string {
  const ends = Object.keys(filters)
    .sort()
    .map((k) => [k, filters[k] ?? '']);
  return createHash('sha256')
    .update(JSON.stringify([collection, query.q ?? '', query.includeDeleted, order, ends]))
    .digest()
    .subarray(0, 12)
    .toString('base64url');
}

const check = (state: string): Buffer => createHash('sha256').update(CHECK_LABEL).update(state).digest().subarray(0, CHECK_BYTES);

function encode(state: unknown[]): string {
  const body = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${body}.${check(body).toString('base64url')}`;
}

const notOurs = () => invalid('cursor', 'is not a cursor this API gave out (malformed or altered)', 'The cursor is not valid.');

/** The state of a cursor whose check holds, or a 400 naming `cursor`. */
function decode(cursor: string): unknown[] {
  const m = cursor.length <= CURSOR_MAX_LENGTH ? CURSOR_RE.exec(cursor) : null;
  if (!m) throw notOurs();
  const given = Buffer.from(m[2]!, 'base64url');
  if (given.length !== CHECK_BYTES || !timingSafeEqual(given, check(m[1]!))) throw notOurs();
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  if (!Array.isArray(state)) throw notOurs();
  return state;
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;

function positionOf(key: SortKey, values: unknown, id: unknown): ListPosition | null {
  if (!Array.isArray(values) || values.length !== KEY_VALUES[key] || typeof id !== 'string' || !UUID_RE.test(id)) return null;
  const out: string[] = [];
  for (const v of values) {
    if (typeof v !== 'string' || v.length > VALUE_MAX_LENGTH || v.includes('\u0000')) return null;
    out.push(v);
  }
  if (key === 'createdAt') {
    if (!/^-?\d{1,19}$/.test(out[0]!)) return null;
    const us = BigInt(out[0]!);
    if (us < US_MIN || us > US_MAX) return null;
  }
  return { values: out, id };
}

/**
 * The store's query of a list call: its order from `sort`, and with a cursor the position to
 * continue after (then `page` is the cursor's next and nothing is counted again). A cursor that
 * is malformed, altered, out of range, or made for another q, filter or sort is a 400 naming
 * `cursor`.
 */
export function openListing(collection: Collection, r: ListRequest): Listing {
  const order = parseSort(collection, r.sort);
  const text = orderText(order);
  const bind = digest(collection, r.query, text, r.filters ?? {});
  if (r.cursor === '') return { query: { ...r.query, order }, orderText: text, bind };
  const [version, madeFor, madeOrder, page, total, exact, values, id] = decode(r.cursor);
  if (version !== CURSOR_VERSION) throw notOurs();
  if (typeof madeOrder !== 'string' || typeof madeFor !== 'string') throw notOurs();
  if (madeOrder !== text || madeFor !== bind) {
    throw invalid('cursor', 'was made for another q, filter or sort: send the same ones, or start again without a cursor', 'The cursor is not valid.');
  }
  const after = positionOf(order.key, values, id);
  if (!after || !isInt(page, 1, PAGE_MAX - 1) || !isInt(total, 0, COUNT_MAX) || (exact !== 0 && exact !== 1)) throw notOurs();
  return {
    query: { ...r.query, order, after, page: page + 1, ...(exact === 1 ? { countedMatches: total } : {}) },
    orderText: text,
    bind,
    carried: { page: page + 1, totalCount: total, totalCountExact: exact === 1 },
  };
}

/** The answer of a list call: the count (the first page's, for a keyset page) and the next cursor. */
export function closeListing<T>(l: Listing, p: Page<T>): ListAnswer<T> {
  const page = l.carried?.page ?? l.query.page;
  const totalCount = l.carried?.totalCount ?? p.totalCount;
  const totalCountExact = l.carried?.totalCountExact ?? p.totalCountExact;
  const nextCursor =
    p.next && page < PAGE_MAX ? encode([CURSOR_VERSION, l.bind, l.orderText, page, totalCount, totalCountExact ? 1 : 0, p.next.values, p.next.id]) : '';
  return { items: p.items, totalCount, totalCountExact, page, nextCursor };
}

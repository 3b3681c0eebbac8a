/** Schemas shared by every route: ids, timestamps, paging, the collection envelope, problems. */
import { type TSchema, Type } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID' });
/** In responses only: a Date is written in its ISO 8601 form by the serializer, so either may be sent. */
export const Timestamp = Type.Unsafe<string | Date>(Type.String({ format: 'date-time', description: 'ISO 8601, UTC' }));
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/**
 * Paging bounds the whole path can carry: the page travels to the directory as an int32
 * (ListQuery.page), so a larger one (or 1e309, or 2^53 + 1) is a 400 here, never a 500 later.
 */
export const PAGE_MAX = 2_147_483_647;
export const PAGE_SIZE_MAX = 100;
export const PAGE_DEFAULT = 1;
export const PAGE_SIZE_DEFAULT = 25;
export const Page = Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: PAGE_DEFAULT, description: '1-based page number' });
export const PageSize = Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: PAGE_SIZE_DEFAULT });

/** The longest cursor the directory gives out (its listing's CURSOR_MAX_LENGTH). */
export const CURSOR_MAX_LENGTH = 2_048;

/**
 * Full profile collection query (spec §4.2 note 2); `id` fetches one resource instead. Parameters
 * with a default are optional: the validator fills them in, and the OpenAPI document must not list
 * them as required.
 */
export const CollectionQuery = Type.Object(
  {
    // No `default` here: a page given beside a cursor is refused, so an absent one must stay absent.
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_MAX, description: `1-based page number (default ${PAGE_DEFAULT}); not with cursor` })),
    pageSize: Type.Optional(PageSize),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring search' })),
    includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Include soft-deleted records' })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: CURSOR_MAX_LENGTH,
        description:
          'nextCursor of an earlier page (opaque): the page after it, in the same order, for the same q, includeDeleted, filters and sort (else 400). Costs what a first page costs, however deep; totalCount is the first page\'s.',
      }),
    ),
    id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

/** `sort` of a collection: one of its keys, '-' first for descending. */
export function SortParam(keys: readonly string[]) {
  const values = keys.flatMap((k) => [k, `-${k}`]);
  return Type.Unsafe<string>({
    type: 'string',
    enum: values,
    default: keys[0],
    description: `The order (the id breaks ties); '-' first for descending. Default ${keys[0]} (oldest first). A cursor keeps the sort it was made with.`,
  });
}

/** Beyond this many matches `totalCount` is the database's estimate (DESIGN §4; the directory's EXACT_COUNT_BOUND). */
export const EXACT_COUNT_BOUND = 1_000;

/**
 * The collection envelope; `exactFlag` (Full profile) adds `totalCountExact` and, unless
 * `cursor: false` (a collection paged by offset only), `nextCursor`.
 */
export function Envelope<T extends TSchema>(item: T, opts: { exactFlag?: boolean; cursor?: boolean } = {}) {
  return Type.Object(
    {
      items: Type.Array(item),
      page: Type.Integer(),
      pageSize: Type.Integer(),
      totalCount: Type.Integer({
        description: opts.exactFlag ? `Exact up to ${EXACT_COUNT_BOUND.toLocaleString('en')} matches; beyond, an estimate (see totalCountExact)` : undefined,
      }),
      totalPages: Type.Integer({ description: opts.exactFlag ? 'ceil(totalCount / pageSize), so an estimate too when totalCount is' : undefined }),
      ...(opts.exactFlag && opts.cursor !== false
        ? {
            nextCursor: Type.Union([Type.String(), Type.Null()], {
              description: 'Pass as `cursor` for the next page (keyset: as fast however deep); null on the last page',
            }),
          }
        : {}),
      ...(opts.exactFlag
        ? {
            totalCountExact: Type.Boolean({
              description: `false when more than ${EXACT_COUNT_BOUND.toLocaleString('en')} records match and totalCount (and totalPages) are the database's estimate; every page stays correct`,
            }),
          }
        : {}),
    },
    { additionalProperties: false },
  );
}

export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.Optional(Type.String()),
  instance: Type.String(),
  traceId: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
});

/** The error statuses most routes can answer, for the response schemas (and the OpenAPI documents). */
export function problems(...statuses: number[]): Record<number, typeof Problem> {
  return Object.fromEntries(statuses.map((s) => [s, Problem]));
}

/** The envelope; `more` (Full profile) adds `totalCountExact` and `nextCursor`. */
export function envelope<T>(items: readonly T[], page: number, pageSize: number, totalCount: number, more?: { totalCountExact: boolean; nextCursor?: string | null }) {
  return { items, page, pageSize, totalCount, totalPages: Math.ceil(totalCount / pageSize), ...(more ?? {}) };
}

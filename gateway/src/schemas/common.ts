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

/**
 * Full profile collection query (spec §4.2 note 2); `id` fetches one resource instead. Parameters
 * with a default are optional: the validator fills them in, and the OpenAPI document must not list
 * them as required.
 */
export const CollectionQuery = Type.Object({
  page: Type.Optional(Page),
  pageSize: Type.Optional(PageSize),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring search' })),
  includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Include soft-deleted records' })),
  id: Type.Optional(Uuid),
});

/** Beyond this many matches `totalCount` is the database's estimate (DESIGN §4; the directory's EXACT_COUNT_BOUND). */
export const EXACT_COUNT_BOUND = 1_000;

/** The collection envelope; `exactFlag` (Full profile) adds `totalCountExact`. */
export function Envelope<T extends TSchema>(item: T, opts: { exactFlag?: boolean } = {}) {
  return Type.Object(
    {
      items: Type.Array(item),
      page: Type.Integer(),
      pageSize: Type.Integer(),
      totalCount: Type.Integer({
        description: opts.exactFlag ? `Exact up to ${EXACT_COUNT_BOUND.toLocaleString('en')} matches; beyond, an estimate (see totalCountExact)` : undefined,
      }),
      totalPages: Type.Integer({ description: opts.exactFlag ? 'ceil(totalCount / pageSize), so an estimate too when totalCount is' : undefined }),
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

export function envelope<T>(items: readonly T[], page: number, pageSize: number, totalCount: number, totalCountExact?: boolean) {
  return { items, page, pageSize, totalCount, totalPages: Math.ceil(totalCount / pageSize), ...(totalCountExact === undefined ? {} : { totalCountExact }) };
}

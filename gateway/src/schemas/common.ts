/** Schemas shared by every route: ids, timestamps, paging, the collection envelope, problems. */
import { type TSchema, Type } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/**
 * Paging bounds the whole path can carry: the page travels to the directory as an int32
 * (ListQuery.page), so a larger one (or 1e309, or 2^53 + 1) is a 400 here, never a 500 later.
 */
export const PAGE_MAX = 2_147_483_647;
export const PAGE_SIZE_MAX = 100;
export const Page = Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: 1, description: '1-based page number' });
export const PageSize = Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 25 });

/** Full profile collection query (spec §4.2 note 2); `id` fetches one resource instead. */
export const CollectionQuery = Type.Object({
  page: Page,
  pageSize: PageSize,
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring search' })),
  includeDeleted: Type.Boolean({ default: false, description: 'Include soft-deleted records' }),
  id: Type.Optional(Uuid),
});

export function Envelope<T extends TSchema>(item: T) {
  return Type.Object(
    {
      items: Type.Array(item),
      page: Type.Integer(),
      pageSize: Type.Integer(),
      totalCount: Type.Integer(),
      totalPages: Type.Integer(),
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

export function envelope<T>(items: readonly T[], page: number, pageSize: number, totalCount: number) {
  return { items, page, pageSize, totalCount, totalPages: Math.ceil(totalCount / pageSize) };
}

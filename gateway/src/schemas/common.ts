/** Schemas shared by every route: ids, timestamps, paging, the collection envelope, problems. */
import { type TSchema, Type } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'A UUID' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

/** Full profile collection query (spec §4.2 note 2); `id` fetches one resource instead. */
export const CollectionQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1, description: '1-based page number' }),
  pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
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

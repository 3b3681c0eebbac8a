/** The organizations API's list parameters and envelope (DESIGN §2's collection rules). */
import { AppError } from '@iam/platform/core';
import { PAGE_DEFAULT, PAGE_SIZE_DEFAULT, envelope } from '../schemas/common';

interface ListParams {
  page?: number;
  pageSize?: number;
  q?: string;
  cursor?: string;
  sort?: string;
  includeDeleted?: boolean;
}

/** The directory's ListQuery of a request; a page beside a cursor is a 400 (DESIGN §2, §4). */
export function listQuery(q: ListParams) {
  if (q.cursor !== undefined && q.page !== undefined) {
    throw AppError.validation('A cursor names its own page.', [{ field: 'query.cursor', message: 'cannot be combined with page: send one or the other' }]);
  }
  return { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT, q: q.q ?? '', includeDeleted: q.includeDeleted ?? false, cursor: q.cursor ?? '', sort: q.sort ?? '' };
}

export function paged<T, J>(r: { items: T[]; totalCount: number; totalCountEstimated: boolean; nextCursor: string; page: number }, pageSize: number, toJson: (x: T) => J) {
  return { ...envelope([], r.page, pageSize, r.totalCount), items: r.items.map(toJson), totalCountExact: !r.totalCountEstimated, nextCursor: r.nextCursor || null };
}


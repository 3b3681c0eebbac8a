/**
 * POST /.search at the root (RFC 7644 §3.4.3): Users, then Groups, paged as one list. A filter
 * naming an attribute one type does not have matches nothing of that type (not an error). The
 * window read of each type is at most `filter.maxResults` long.
 */
import { ScimError } from '../../domain/scim-error';
import { type ListParams, MAX_RESULTS, listResponse } from './query';
import type { Json } from './resources';
import type { ScimResult, ScimScope } from './scope';

/** What the root search needs of each resource type. */
export interface Lister {
  list(scope: ScimScope, params: ListParams): Promise<ScimResult>;
}

async function part(list: () => Promise<ScimResult>): Promise<{ items: Json[]; total: number }> {
  try {
    const r = await list();
    const body = r.body as { Resources: Json[]; totalResults: number };
    return { items: body.Resources, total: body.totalResults };
  } catch (err) {
    if (err instanceof ScimError && err.scimType === 'invalidFilter' && /cannot be filtered on|Unknown sub-attribute/.test(err.detail)) return { items: [], total: 0 };
    throw err;
  }
}

export async function rootSearch(scope: ScimScope, p: ListParams, users: Lister, groups: Lister): Promise<ScimResult> {
  const startIndex = Math.max(1, Number(p.startIndex ?? 1) || 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, Number(p.count ?? 100) || 0));
  const window = { ...p, startIndex: 1, count: Math.min(MAX_RESULTS, startIndex - 1 + count) };
  const u = await part(() => users.list(scope, window));
  const g = await part(() => groups.list(scope, window));
  const all = [...u.items, ...g.items].slice(startIndex - 1, startIndex - 1 + count);
  return { status: 200, body: listResponse(all, u.total + g.total, startIndex) };
}

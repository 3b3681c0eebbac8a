/**
 * A collection spec (routes/collections) whose single-resource reads go through the read cache
 * and whose writes drop what they change on this replica before their response leaves
 * (read-your-writes). A write that failed may still have committed (a deadline passed after the
 * commit), so failed writes invalidate too.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CollectionSpec } from '../routes/collections/collection';
import type { CachedKind, ReadCache } from './read-cache';

/** Which collection a spec is: its own kind is cached; `link` only invalidates. */
export type CollectionKind = CachedKind | 'link';

/** What a write to one resource of a kind can change in other cached records. */
function afterWrite(cache: ReadCache, kind: CollectionKind, id: string | undefined): void {
  switch (kind) {
    case 'user':
      if (id) cache.invalidate('user', id, 'write');
      else cache.invalidateKind('user', 'write');
      return;
    case 'role':
      // User records show their roles' names.
      if (id) cache.invalidate('role', id, 'write');
      cache.invalidateKind('user', 'write');
      return;
    case 'permission':
      // Role records show their permissions' names.
      if (id) cache.invalidate('permission', id, 'write');
      cache.invalidateKind('role', 'write');
      return;
    case 'link':
      cache.invalidateKind('role', 'write');
      return;
  }
}

export function cachedSpec<R, C extends TSchema, U extends TSchema>(spec: CollectionSpec<R, C, U>, cache: ReadCache | undefined, kind: CollectionKind): CollectionSpec<R, C, U> {
  if (!cache) return spec;
  const after = async <T>(id: string | undefined, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      afterWrite(cache, kind, id);
    }
  };
  return {
    ...spec,
    // A deleted record is read past the cache (the cache holds live records only).
    get: kind === 'link' ? spec.get : (id, o) => (o?.includeDeleted ? spec.get(id, o) : cache.get(kind, id, () => spec.get(id))),
    // A new record was never read, so only what shows it elsewhere goes: roles, for a new link.
    create: async (body) => {
      let id: string | undefined;
      try {
        const created = await spec.create(body);
        id = created.id;
        return created;
      } finally {
        if (kind === 'link') afterWrite(cache, kind, undefined);
        else if (id) cache.invalidate(kind, id, 'write');
      }
    },
    update: (id, body) => after(id, () => spec.update(id, body)),
    remove: (id) => after(id, () => spec.remove(id)),
  };
}

/**
 * Routes outside the collections that change a user record the caller cannot name (a
 * password-reset or email-verification confirm acts on the token's user): a success drops every
 * cached user on this replica before its response leaves.
 */
export const USER_CHANGING_ROUTES: ReadonlySet<string> = new Set(['/api/v1/auth/password-reset/confirm', '/api/v1/auth/email-verification/confirm']);

export function dropUsersAfter(app: FastifyInstance, cache: ReadCache | undefined, routes: ReadonlySet<string> = USER_CHANGING_ROUTES): void {
  if (!cache) return;
  app.addHook('onSend', async (req, reply) => {
    if (req.method !== 'GET' && reply.statusCode < 300 && routes.has(req.routeOptions.url ?? '')) cache.invalidateKind('user', 'write');
  });
}

/**
 * The gateway's read cache for single-resource reads (users, roles, permissions by id; DESIGN
 * §4), kept per replica the way Keycloak keeps users and realms: entries are dropped
 *
 *   - by the directory's `directory.*` events, on every replica (within the event's way through
 *     the outbox and NATS, well under a second): a user event drops that user; a role event that
 *     role and every user (a user record shows its roles' names); a permission event that
 *     permission and every role (a role shows its permissions' names); a link event every role;
 *   - by a write through this replica, after the directory committed it and before the write's
 *     response leaves (read-your-writes; see cachedSpec);
 *   - when events may have been missed (the NATS connection dropped): everything, and nothing is
 *     cached again until the subscription is back (BroadcastOptions.onLive);
 *   - after `ttlMs` whatever happens (the backstop), and the oldest first beyond `maxEntries`.
 *
 * A read that was on its way while any invalidation happened is answered but not kept
 * (generation check), so a slow read can never put back what an event just removed. The cache
 * sits behind authentication and the permission policy (it is called from the route handler),
 * and holds nothing that depends on the caller. Only successful reads are kept (a 404 is not).
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { type EventBus, type IncomingEvent, InvalidatedCache, type Subscription } from '@iam/platform/bus';
import type { Logger, Metrics } from '@iam/platform/core';

export type CachedKind = 'user' | 'role' | 'permission';

export interface ReadCacheOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Clock (tests). */
  readonly now?: () => number;
}

type InvalidationReason = 'event' | 'write' | 'gap';

/**
 * A resource's key: its id in lower case. A UUID may arrive in upper case (the routes accept it)
 * while the directory's events name it in lower case; one key per resource, so an event drops it
 * whichever spelling filled it.
 */
const keyOf = (kind: CachedKind, id: string): string => `${kind}:${id.toLowerCase()}`;

/** The read cache: an InvalidatedCache keyed `kind:id`, with its metrics and the directory's events. */
export class ReadCache {
  private readonly cache: InvalidatedCache<unknown>;

  constructor(private readonly opts: ReadCacheOptions) {
    this.cache = new InvalidatedCache({ ttlMs: opts.ttlMs, maxEntries: opts.maxEntries, metrics: opts.metrics, ...(opts.now ? { now: opts.now } : {}) });
  }

  /** The resource from the cache, or loaded (and kept when nothing changed meanwhile). */
  async get<R>(kind: CachedKind, id: string, load: () => Promise<R>): Promise<R> {
    return (await this.cache.get(keyOf(kind, id), load)) as R;
  }

  /** Drops one resource. */
  invalidate(kind: CachedKind, id: string, reason: InvalidationReason): void {
    this.cache.invalidate(keyOf(kind, id));
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /** Drops every resource of a kind (every user after a role changed, say). */
  invalidateKind(kind: CachedKind, reason: InvalidationReason): void {
    this.cache.invalidatePrefix(`${kind}:`);
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /** Drops everything. */
  flush(reason: InvalidationReason): void {
    this.cache.flush();
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /**
   * Events arrive (true) or may be missed (false). Either way everything goes: entries kept
   * before a gap may have missed their invalidation.
   */
  setLive(live: boolean): void {
    if (this.cache.setLive(live)) this.opts.logger.info({ live }, live ? 'read cache on: invalidation events flow' : 'read cache off until invalidation events flow again');
    this.opts.metrics.readCacheInvalidations.inc({ reason: 'gap' });
  }

  /** Applies one `directory.*` event. */
  apply(event: Pick<IncomingEvent, 'subject' | 'data'>): void {
    const s = event.subject;
    if (s === SUBJECTS.userCreated || s === SUBJECTS.userUpdated || s === SUBJECTS.userDeleted) {
      this.invalidate('user', decodeEvent(s, event.data).userId, 'event');
    } else if (s === SUBJECTS.roleCreated || s === SUBJECTS.roleUpdated || s === SUBJECTS.roleDeleted) {
      this.invalidate('role', decodeEvent(s, event.data).roleId, 'event');
      this.invalidateKind('user', 'event');
    } else if (s === SUBJECTS.permissionCreated || s === SUBJECTS.permissionUpdated || s === SUBJECTS.permissionDeleted) {
      this.invalidate('permission', decodeEvent(s, event.data).permissionId, 'event');
      this.invalidateKind('role', 'event');
    } else if (s.startsWith('directory.role_permission.')) {
      this.invalidateKind('role', 'event'); // a role shows its permissions' names
    } else if (s.startsWith('directory.')) {
      this.flush('event'); // anything the directory adds later: everything
    }
  }

  get size(): number {
    return this.cache.size;
  }
}

/** Feeds the cache from the bus: `directory.*` broadcasts, and whether they flow. */
export function subscribeReadCache(cache: ReadCache, bus: EventBus): Subscription {
  return bus.subscribe(['directory.>'], async (e) => cache.apply(e), { onLive: (live) => cache.setLive(live) });
}

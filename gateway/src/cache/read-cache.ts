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
import type { EventBus, IncomingEvent, Subscription } from '@iam/platform/bus';
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

interface Entry {
  readonly value: unknown;
  readonly expiresAt: number;
}

export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation; a read that saw another generation at its start is not kept. */
  private generation = 0;
  /** Whether invalidation events are known to arrive (the subscription is live). */
  private live = false;
  /**
   * Loads on their way, by key, with the generation they started in: a miss for a key already
   * loading joins that load (a burst of reads of one resource costs one upstream call), unless
   * anything was invalidated since it started (it might then answer what a write replaced).
   */
  private readonly loading = new Map<string, { generation: number; promise: Promise<unknown> }>();
  private readonly now: () => number;

  constructor(private readonly opts: ReadCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The resource from the cache, or loaded (and kept when nothing changed meanwhile). */
  async get<R>(kind: CachedKind, id: string, load: () => Promise<R>): Promise<R> {
    const key = `${kind}:${id}`;
    if (!this.live) {
      this.opts.metrics.readCacheRequests.inc({ kind, outcome: 'bypass' });
      return load();
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expiresAt > this.now()) {
        this.opts.metrics.readCacheRequests.inc({ kind, outcome: 'hit' });
        return hit.value as R;
      }
      this.entries.delete(key);
    }
    const generation = this.generation;
    const joined = this.loading.get(key);
    if (joined && joined.generation === generation) {
      this.opts.metrics.readCacheRequests.inc({ kind, outcome: 'joined' });
      return (await joined.promise) as R;
    }
    this.opts.metrics.readCacheRequests.inc({ kind, outcome: 'miss' });
    const promise = load();
    const own = { generation, promise };
    this.loading.set(key, own);
    try {
      const value = await promise;
      if (this.live && generation === this.generation) {
        if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        this.entries.set(key, { value, expiresAt: this.now() + this.opts.ttlMs });
      }
      return value;
    } finally {
      if (this.loading.get(key) === own) this.loading.delete(key);
    }
  }

  /** Drops one resource. */
  invalidate(kind: CachedKind, id: string, reason: InvalidationReason): void {
    this.generation++;
    this.entries.delete(`${kind}:${id}`);
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /** Drops every resource of a kind (every user after a role changed, say). */
  invalidateKind(kind: CachedKind, reason: InvalidationReason): void {
    this.generation++;
    const prefix = `${kind}:`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /** Drops everything. */
  flush(reason: InvalidationReason): void {
    this.generation++;
    this.entries.clear();
    this.opts.metrics.readCacheInvalidations.inc({ reason });
  }

  /**
   * Events arrive (true) or may be missed (false). Either way everything goes: entries kept
   * before a gap may have missed their invalidation.
   */
  setLive(live: boolean): void {
    if (live !== this.live) this.opts.logger.info({ live }, live ? 'read cache on: invalidation events flow' : 'read cache off until invalidation events flow again');
    this.live = live;
    this.flush('gap');
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
    return this.entries.size;
  }
}

/** Feeds the cache from the bus: `directory.*` broadcasts, and whether they flow. */
export function subscribeReadCache(cache: ReadCache, bus: EventBus): Subscription {
  return bus.subscribe(['directory.>'], async (e) => cache.apply(e), { onLive: (live) => cache.setLive(live) });
}

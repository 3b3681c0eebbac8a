/**
 * A per-process cache whose entries events drop, the scheme of Keycloak's user cache: the gateway's
 * read cache (users, roles, permissions by id) and identity's principal cache (a user's roles and
 * permissions) are both one of these, each applying its own `directory.*` events.
 *
 * - Entries are dropped by key, by key prefix or all at once, when an event (or a local write)
 *   says they changed; a backstop TTL ends them whatever happens; the oldest go first beyond
 *   `maxEntries`.
 * - While invalidation events may be missed (the bus connection dropped; `setLive(false)`)
 *   nothing is kept or served: every get loads.
 * - A load that was on its way while anything was invalidated is answered but not kept
 *   (generation check), so a slow load can never put back what an event just removed. A miss for
 *   a key already loading joins that load when nothing was invalidated since it started.
 */

import type { Metrics } from '../metrics';

export type CacheOutcome = 'hit' | 'miss' | 'joined' | 'bypass';

export interface InvalidatedCacheOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** Clock (tests). */
  readonly now?: () => number;
  /** Every get counted in `read_cache_requests_total`, its `kind` the key's prefix before `:` (`user:…` → user). */
  readonly metrics?: Pick<Metrics, 'readCacheRequests'>;
}

interface Entry<V> {
  readonly value: V;
  readonly expiresAt: number;
}

export class InvalidatedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Bumped by every invalidation; a load that saw another generation at its start is not kept. */
  private generation = 0;
  private live = false;
  private readonly loading = new Map<string, { generation: number; promise: Promise<V> }>();
  private readonly now: () => number;

  constructor(private readonly opts: InvalidatedCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** One get in `read_cache_requests_total`. */
  private count(key: string, outcome: CacheOutcome): void {
    this.opts.metrics?.readCacheRequests.inc({ kind: key.slice(0, key.indexOf(':')), outcome });
  }

  /** The value from the cache, or loaded (and kept when nothing changed meanwhile). */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.live) {
      this.count(key, 'bypass');
      return load();
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expiresAt > this.now()) {
        this.count(key, 'hit');
        return hit.value;
      }
      this.entries.delete(key);
    }
    const generation = this.generation;
    const joined = this.loading.get(key);
    if (joined && joined.generation === generation) {
      this.count(key, 'joined');
      return joined.promise;
    }
    this.count(key, 'miss');
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

  /** Drops one entry. */
  invalidate(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Drops every entry whose key starts with `prefix`. */
  invalidatePrefix(prefix: string): void {
    this.generation++;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** Drops everything. */
  flush(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Whether invalidation events arrive. Either way everything goes: entries kept before a gap may have missed theirs. Answers whether it changed. */
  setLive(live: boolean): boolean {
    const changed = live !== this.live;
    this.live = live;
    this.flush();
    return changed;
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Entries kept for a while (and at most `max` of them), for the provider's short-lived memory: the
 * grants read ahead with their tokens (pg-adapter.ts) and the session ids of provider sessions
 * (session-ids.ts). Entries are set in time order, so the oldest go from the front.
 */
export class TimedEntries<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = Number.POSITIVE_INFINITY,
  ) {}

  /** The value while fresh. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (Date.now() - e.at <= this.ttlMs) return e.value;
    this.entries.delete(key);
    return undefined;
  }

  /** The value once: taken out, and only while fresh. */
  take(key: string): V | undefined {
    const value = this.get(key);
    this.entries.delete(key);
    return value;
  }

  set(key: string, value: V): void {
    const now = Date.now();
    this.entries.delete(key);
    for (const [k, e] of this.entries) {
      if (this.entries.size < this.max && now - e.at <= this.ttlMs) break;
      this.entries.delete(k);
    }
    this.entries.set(key, { value, at: now });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

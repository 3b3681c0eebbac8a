/**
 * Identity's session id of a provider session, as the access tokens of its grants carry it
 * (`sid`): read once and kept for a minute, so a token request does not wait on it. The pairing
 * never changes (a provider session signed in again keeps its row); a session ended meanwhile
 * has its grants ended with it, so no token request reaches it, and its token record writes
 * nothing (opTokenWrites checks that the session is live).
 */
export class OpSessionIds {
  private readonly ids = new Map<string, { id: string; at: number }>();

  constructor(
    private readonly lookup: (opSessionUid: string) => Promise<string | null>,
    private readonly ttlMs = 60_000,
    private readonly max = 10_000,
  ) {}

  async get(opSessionUid: string): Promise<string | null> {
    const now = Date.now();
    const hit = this.ids.get(opSessionUid);
    if (hit && now - hit.at <= this.ttlMs) return hit.id;
    const id = await this.lookup(opSessionUid);
    this.ids.delete(opSessionUid);
    if (id) {
      // Oldest first out: entries are set in time order.
      for (const [k, e] of this.ids) {
        if (this.ids.size < this.max && now - e.at <= this.ttlMs) break;
        this.ids.delete(k);
      }
      this.ids.set(opSessionUid, { id, at: now });
    }
    return id;
  }
}

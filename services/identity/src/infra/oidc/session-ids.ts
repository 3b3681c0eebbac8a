/**
 * Identity's session id of a provider session, as the access tokens of its grants carry it
 * (`sid`): read once and kept for a minute, so a token request does not wait on it. The pairing
 * never changes (a provider session signed in again keeps its row); a session ended meanwhile
 * has its grants ended with it, so no token request reaches it, and its token record writes
 * nothing (opTokenWrites checks that the session is live).
 */
import { TimedEntries } from './timed-entries';

export class OpSessionIds {
  private readonly ids: TimedEntries<string>;

  constructor(
    private readonly lookup: (opSessionUid: string) => Promise<string | null>,
    ttlMs = 60_000,
    max = 10_000,
  ) {
    this.ids = new TimedEntries(ttlMs, max);
  }

  async get(opSessionUid: string): Promise<string | null> {
    const hit = this.ids.get(opSessionUid);
    if (hit) return hit;
    const id = await this.lookup(opSessionUid);
    if (id) this.ids.set(opSessionUid, id);
    return id;
  }
}

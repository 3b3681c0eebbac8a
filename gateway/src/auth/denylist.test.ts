/**
 * The gateway's denylist: a token by its jti, every token of a subject issued before a revocation,
 * and every token issued to a revoked (deleted) OAuth client, by its `client_id`.
 */
import pino from 'pino';
import type { BroadcastOptions, EventBus } from '@iam/platform/bus';
import { clientTokensSubject } from '@iam/platform/core';
import { eventually } from '@iam/platform/testing';
import { Denylist, syncDenylist } from './denylist';

describe('Denylist', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const later = () => new Date(Date.now() + 60_000);

  it('refuses a denylisted jti until its expiry, and no other token', () => {
    const d = new Denylist();
    d.add('j1', later());
    d.add('j-expired', new Date(Date.now() - 1_000));
    expect(d.refuses({ jti: 'j1', sub: 'u', iat: now() })).toBe(true);
    expect(d.refuses({ jti: 'j2', sub: 'u', iat: now() })).toBe(false);
    expect(d.refuses({ jti: 'j-expired', sub: 'u', iat: now() })).toBe(false);
  });

  it("refuses a subject's tokens issued before its revocation, and accepts later ones", () => {
    const d = new Denylist();
    d.revokeSubject('u', new Date(), later());
    expect(d.refuses({ jti: 'a', sub: 'u', iat: now() - 10 })).toBe(true);
    // The same second as the revocation counts as before it.
    expect(d.refuses({ jti: 'b', sub: 'u', iat: now() })).toBe(true);
    expect(d.refuses({ jti: 'c', sub: 'u', iat: now() + 2 })).toBe(false);
    expect(d.refuses({ jti: 'd', sub: 'other', iat: now() - 10 })).toBe(false);
  });

  it("a client's own revocation (its powers shrank) ends its service-account tokens, not its users'", () => {
    const d = new Denylist();
    d.revokeSubject('client-1', new Date(), later());
    expect(d.refuses({ jti: 'b', sub: 'client-1', clientId: 'client-1', iat: now() - 10 })).toBe(true);
    expect(d.refuses({ jti: 'a', sub: 'user-1', clientId: 'client-1', iat: now() - 10 })).toBe(false);
  });

  it("a deleted client (clientTokensSubject revoked) ends its users' tokens by client_id, not other clients'", () => {
    const d = new Denylist();
    d.revokeSubject('client-1', new Date(), later());
    d.revokeSubject(clientTokensSubject('client-1'), new Date(), later());
    expect(d.refuses({ jti: 'a', sub: 'user-1', clientId: 'client-1', iat: now() - 10 })).toBe(true);
    expect(d.refuses({ jti: 'b', sub: 'client-1', clientId: 'client-1', iat: now() - 10 })).toBe(true);
    expect(d.refuses({ jti: 'c', sub: 'user-1', clientId: 'client-2', iat: now() - 10 })).toBe(false);
    expect(d.refuses({ jti: 'd', sub: 'user-1', iat: now() - 10 })).toBe(false);
    expect(d.refuses({ jti: 'e', sub: 'user-1', clientId: 'client-1', iat: now() + 2 })).toBe(false);
  });

  it('forgets revocations once they no longer matter', () => {
    const d = new Denylist();
    d.revokeSubject('u', new Date(), new Date(Date.now() - 1));
    expect(d.refuses({ jti: 'a', sub: 'u', iat: now() - 10 })).toBe(false);
  });
});

describe('syncDenylist', () => {
  /** A bus whose broadcast subscription is live or not as the test says. */
  function fakeBus() {
    let onLive: ((live: boolean) => void) | undefined;
    const bus = {
      subscribe: (_subjects: readonly string[], _handler: unknown, opts?: BroadcastOptions) => {
        onLive = opts?.onLive;
        return { stop: async () => undefined };
      },
    } as unknown as EventBus;
    return { bus, live: (v: boolean) => onLive?.(v) };
  }

  it('loads from identity every poll while the subscription is not live, once more when it is live again, and not in between', async () => {
    const { bus, live } = fakeBus();
    let loads = 0;
    const revoked: Array<{ jti: string; expiresAt: Date }> = [];
    const denylist = new Denylist();
    const sync = syncDenylist({
      denylist,
      bus,
      logger: pino({ level: 'silent' }),
      reloadMs: 3_600_000,
      outagePollMs: 20,
      load: async () => {
        loads += 1;
        return { tokens: [...revoked], subjects: [] };
      },
    });
    try {
      // Not live yet (NATS not reached): a revocation committed now is picked up by the polls.
      await eventually(() => loads >= 3, 2_000, 5);
      revoked.push({ jti: 'during-outage', expiresAt: new Date(Date.now() + 60_000) });
      await eventually(() => denylist.refuses({ jti: 'during-outage', sub: 'u', iat: 0 }), 2_000, 5);
      // Live: one catch-up load, then the polls stop.
      live(true);
      await new Promise((r) => setTimeout(r, 50));
      const settled = loads;
      await new Promise((r) => setTimeout(r, 150));
      expect(loads).toBe(settled);
      // The connection drops: polling again.
      live(false);
      revoked.push({ jti: 'second-outage', expiresAt: new Date(Date.now() + 60_000) });
      await eventually(() => denylist.refuses({ jti: 'second-outage', sub: 'u', iat: 0 }), 2_000, 5);
      expect(loads).toBeGreaterThan(settled);
    } finally {
      await sync.stop();
    }
  });
});

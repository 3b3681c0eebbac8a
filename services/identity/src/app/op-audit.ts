/**
 * What the OpenID provider puts in the audit trail beyond sign-ins (which are the REST login's
 * own `identity.login.*` events): consent, one event per grant decision, and the tokens issued to
 * clients, which are counted, not written one by one. A token endpoint answer only adds to an
 * in-memory count per client; every window (a minute) the counts become one
 * `identity.client.tokens_issued` event per client that got tokens, all in one transaction. So
 * the grant path never writes for the audit (ZITADEL fell over writing an event per
 * introspection, zitadel#8479). What a crash loses is the count of the current window.
 */
import { SUBJECTS } from '@iam/contracts';
import { type Logger, event } from '@iam/platform';
import type { UnitOfWork } from '../domain/ports';

export interface OpAudit {
  /** A user allowed a client these scopes (committed with its event before the answer). */
  consentGranted(userId: string, clientId: string, scopes: readonly string[]): Promise<void>;
  /** A token endpoint answer to a client (no write: counted for the window's event). */
  tokensIssued(clientId: string, grantType: string): void;
}

/** Counts per client and grant type within a window, turned into one event per client when flushed. */
export class TokenIssueCounter {
  private counts = new Map<string, Map<string, number>>();
  private windowStart: Date;

  constructor(private readonly now: () => Date = () => new Date()) {
    this.windowStart = now();
  }

  add(clientId: string, grantType: string): void {
    let byGrant = this.counts.get(clientId);
    if (!byGrant) {
      // Bounded by the registered clients: only clients the provider authenticated get here.
      byGrant = new Map();
      this.counts.set(clientId, byGrant);
    }
    byGrant.set(grantType, (byGrant.get(grantType) ?? 0) + 1);
  }

  /** The window's counts (and a new window from now). */
  take(): { windowStart: Date; windowEnd: Date; clients: Array<{ clientId: string; count: number; byGrantType: Record<string, number> }> } {
    const windowStart = this.windowStart;
    const windowEnd = this.now();
    const counts = this.counts;
    this.counts = new Map();
    this.windowStart = windowEnd;
    const clients = [...counts].map(([clientId, byGrant]) => {
      const byGrantType = Object.fromEntries(byGrant);
      return { clientId, count: [...byGrant.values()].reduce((a, b) => a + b, 0), byGrantType };
    });
    return { windowStart, windowEnd, clients };
  }
}

export function createOpAudit(deps: { uow: UnitOfWork<object>; logger: Logger; windowMs?: number; now?: () => Date }): OpAudit & { flush(): Promise<void>; start(): void; stop(): Promise<void> } {
  const counter = new TokenIssueCounter(deps.now);
  const windowMs = deps.windowMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function writeWindow(): Promise<void> {
    const w = counter.take();
    if (w.clients.length === 0) return;
    try {
      await deps.uow.run((tx) =>
        tx.publish(w.clients.map((c) => event(SUBJECTS.clientTokensIssued, { clientId: c.clientId, count: c.count, byGrantType: c.byGrantType, windowStart: w.windowStart, windowEnd: w.windowEnd }))),
      );
    } catch (err) {
      // The counts of this window are lost, never the grants: the audit of issued tokens is a tally.
      deps.logger.error({ err, clients: w.clients.length }, 'issued-token counts could not be written to the audit outbox');
    }
  }

  const flush = (): Promise<void> => (flushing = flushing.then(writeWindow));

  return {
    async consentGranted(userId, clientId, scopes) {
      await deps.uow.run((tx) => tx.publish([event(SUBJECTS.consentGranted, { userId, clientId, scopes: [...scopes] })]));
    },
    tokensIssued(clientId, grantType) {
      counter.add(clientId, grantType);
    },
    flush,
    start() {
      timer ??= setInterval(() => void flush(), windowMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

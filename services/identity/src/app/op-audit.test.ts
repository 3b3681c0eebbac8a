/**
 * The provider's audit: consent is one event committed before the answer; issued tokens are only
 * counted, and each window becomes one `identity.client.tokens_issued` per client (a tally by grant
 * type), written in one transaction, nothing when no token was issued.
 */
import { type EventPayload, SUBJECTS } from '@iam/contracts';
import type { NewEvent } from '@iam/platform';
import { testLogger } from '@iam/platform/testing';
import type { UnitOfWork } from '../domain/ports';
import { TokenIssueCounter, createOpAudit } from './op-audit';

function recordingUow() {
  const transactions: NewEvent[][] = [];
  const uow: UnitOfWork<object> = {
    run: async (fn) => {
      const events: NewEvent[] = [];
      const out = await fn({ publish: async (e) => void events.push(...e) });
      transactions.push(events);
      return out;
    },
  };
  return { uow, transactions };
}

describe('provider audit', () => {
  it('counts tokens per client and grant type in a window; taking the window starts a new one', () => {
    let t = new Date('2026-01-01T00:00:00Z');
    const c = new TokenIssueCounter(() => t);
    c.add('svc', 'client_credentials');
    c.add('svc', 'client_credentials');
    c.add('web', 'authorization_code');
    c.add('web', 'refresh_token');
    c.add('web', 'refresh_token');
    t = new Date('2026-01-01T00:01:00Z');
    const w = c.take();
    expect(w.windowStart.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(w.windowEnd.toISOString()).toBe('2026-01-01T00:01:00.000Z');
    expect(w.clients).toEqual([
      { clientId: 'svc', count: 2, byGrantType: { client_credentials: 2 } },
      { clientId: 'web', count: 3, byGrantType: { authorization_code: 1, refresh_token: 2 } },
    ]);
    expect(c.take()).toMatchObject({ windowStart: t, clients: [] });
  });

  it('a window of 1,000 grants is one transaction with one event per client; an empty window writes nothing', async () => {
    const { uow, transactions } = recordingUow();
    const audit = createOpAudit({ uow, logger: testLogger() });
    for (let i = 0; i < 1_000; i++) audit.tokensIssued(i % 2 ? 'svc-a' : 'svc-b', 'client_credentials');
    expect(transactions).toHaveLength(0);
    await audit.flush();
    expect(transactions).toHaveLength(1);
    expect(transactions[0]!.map((e) => e.subject)).toEqual([SUBJECTS.clientTokensIssued, SUBJECTS.clientTokensIssued]);
    const payloads = transactions[0]!.map((e) => e.payload as EventPayload<typeof SUBJECTS.clientTokensIssued>);
    expect(payloads.map((p) => [p.clientId, p.count, p.byGrantType])).toEqual([
      ['svc-b', 500, { client_credentials: 500 }],
      ['svc-a', 500, { client_credentials: 500 }],
    ]);
    await audit.flush();
    expect(transactions).toHaveLength(1);
    // stop() writes what the window holds.
    audit.tokensIssued('svc-a', 'client_credentials');
    await audit.stop();
    expect(transactions).toHaveLength(2);
  });

  it('consent is one event with the user, the client and the scopes', async () => {
    const { uow, transactions } = recordingUow();
    const audit = createOpAudit({ uow, logger: testLogger() });
    await audit.consentGranted('user-1', 'rp-web', ['openid', 'email']);
    expect(transactions).toEqual([[{ subject: SUBJECTS.consentGranted, payload: { userId: 'user-1', clientId: 'rp-web', scopes: ['openid', 'email'] }, id: undefined }]]);
  });

  it('a window that cannot be written is logged and dropped; the next one is written', async () => {
    let fail = true;
    const written: NewEvent[] = [];
    const uow: UnitOfWork<object> = {
      run: async (fn) => {
        if (fail) throw new Error('database down');
        return fn({ publish: async (e) => void written.push(...e) });
      },
    };
    const audit = createOpAudit({ uow, logger: testLogger() });
    audit.tokensIssued('svc', 'client_credentials');
    await expect(audit.flush()).resolves.toBeUndefined();
    fail = false;
    audit.tokensIssued('svc', 'client_credentials');
    await audit.flush();
    expect(written.map((e) => (e.payload as EventPayload<typeof SUBJECTS.clientTokensIssued>).count)).toEqual([1]);
  });
});

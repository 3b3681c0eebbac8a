/**
 * The upstream strategy's tickets: single use, short-lived, naming one user; the strategy's first
 * stage refuses a ticket it does not hold, a locked account (not evaluated), and another user's.
 */
import type { Principal } from '../../../domain/model';
import type { FactorInput, FirstContext } from '../strategy';
import { createUpstreamTickets, upstreamStrategy } from './upstream';

const ada: Principal = { userId: 'a0a0a0a0-0000-4000-8000-000000000001', firstName: 'Ada', lastName: 'L', email: 'ada@example.com', roles: [], permissions: [], emailVerified: true };
const bob: Principal = { ...ada, userId: 'b0b0b0b0-0000-4000-8000-000000000002', email: 'bob@example.com' };

describe('upstream tickets', () => {
  it('are single use and expire', () => {
    let now = 1_000;
    const t = createUpstreamTickets(60_000, () => now);
    const ticket = t.issue(ada.userId, ['fed']);
    expect(t.peek(ticket)).toEqual({ userId: ada.userId, amr: ['fed'] });
    expect(t.take(ticket)).toEqual({ userId: ada.userId, amr: ['fed'] });
    expect(t.take(ticket)).toBeNull();
    const late = t.issue(ada.userId, ['fed']);
    now += 60_001;
    expect(t.peek(late)).toBeNull();
    expect(t.take(late)).toBeNull();
  });
});

describe('upstream strategy (first factor)', () => {
  const tickets = createUpstreamTickets();
  const users = new Map([ada, bob].map((p) => [p.userId, p]));
  const s = upstreamStrategy({ tickets, principals: { principal: async (id) => users.get(id) ?? null } });
  const ctx = async (input: FactorInput, evaluate = true): Promise<FirstContext> => ({ ...(await s.first!.subject(input))!, evaluate });

  it('a held ticket signs its user in with the amr it carries, once', async () => {
    const input = { method: 'upstream', ticket: tickets.issue(ada.userId, ['fed', 'mfa']) };
    const c = await ctx(input);
    expect(c.principal?.userId).toBe(ada.userId);
    expect(await s.first!.verify(c, input)).toMatchObject({ principal: { userId: ada.userId }, amr: ['fed', 'mfa'] });
    expect(await s.first!.verify(c, input)).toMatchObject({ principal: null });
  });

  it('an unknown ticket, a locked account and a ticket of another user are refused', async () => {
    const unknown = { method: 'upstream', ticket: 'x'.repeat(43) };
    expect(await s.first!.verify(await ctx(unknown), unknown)).toMatchObject({ principal: null });
    const locked = { method: 'upstream', ticket: tickets.issue(ada.userId, ['fed']) };
    expect(await s.first!.verify(await ctx(locked, false), locked)).toMatchObject({ principal: null });
    const mine = { method: 'upstream', ticket: tickets.issue(ada.userId, ['fed']) };
    const bobs = await ctx({ method: 'upstream', ticket: tickets.issue(bob.userId, ['fed']) });
    expect(await s.first!.verify(bobs, mine)).toMatchObject({ principal: null });
  });

  it('input of another shape is no subject (a wrong factor, never an exception)', async () => {
    expect(await s.first!.subject({ method: 'upstream', userId: ada.userId })).toBeNull();
  });
});

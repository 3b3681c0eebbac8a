/**
 * A sign-in through another identity provider as a first factor (issue #40), registered like any
 * other strategy. The upstream's answer is checked before the flow sees it (app/federation.ts:
 * state, PKCE, the ID token, the linking matrix); what reaches this strategy is a ticket: single
 * use, short-lived, kept in this process, naming the user and the amr that sign-in earned (`fed`,
 * plus `mfa` only when the provider is trusted for it). The input carries only the ticket's random
 * id, so no caller can make one; the flow still applies the lockout (a locked account is refused
 * here too) and the one MFA policy.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Directory } from '../../../domain/ports';
import { emailKey } from '../lockout';
import { defineStrategy } from '../strategy';

export const UpstreamInput = Type.Object({ method: Type.Literal('upstream'), ticket: Type.String({ minLength: 32, maxLength: 64 }) });

export interface UpstreamTickets {
  /** A ticket for a verified upstream sign-in of `userId`. */
  issue(userId: string, amr: readonly string[]): string;
  /** Who a live ticket names, without using it up. */
  peek(ticket: string): { userId: string; amr: readonly string[] } | null;
  /** Uses a live ticket up. */
  take(ticket: string): { userId: string; amr: readonly string[] } | null;
}

/** Tickets in memory: the route that completes the upstream sign-in redeems its ticket in the same request. */
export function createUpstreamTickets(ttlMs = 60_000, now: () => number = Date.now): UpstreamTickets {
  const tickets = new Map<string, { userId: string; amr: readonly string[]; until: number }>();
  const live = (t: string) => {
    const e = tickets.get(t);
    if (e && e.until <= now()) tickets.delete(t);
    return e && e.until > now() ? e : null;
  };
  return {
    issue(userId, amr) {
      for (const [k, e] of tickets) if (e.until <= now()) tickets.delete(k);
      const t = randomBytes(32).toString('base64url');
      tickets.set(t, { userId, amr: [...amr], until: now() + ttlMs });
      return t;
    },
    peek: (t) => {
      const e = live(t);
      return e ? { userId: e.userId, amr: e.amr } : null;
    },
    take: (t) => {
      const e = live(t);
      tickets.delete(t);
      return e ? { userId: e.userId, amr: e.amr } : null;
    },
  };
}

export const UPSTREAM_REFUSED = 'The sign-in with that provider could not be completed.';

export function upstreamStrategy(deps: { tickets: UpstreamTickets; principals: Pick<Directory, 'principal'> }) {
  return defineStrategy({
    method: 'upstream',
    input: UpstreamInput,
    audit: 'upstream',
    first: {
      refusal: { message: UPSTREAM_REFUSED, reason: 'identity.upstream_refused' },
      async subject(input) {
        const t = deps.tickets.peek(input.ticket);
        const principal = t ? await deps.principals.principal(t.userId) : null;
        return { key: principal ? emailKey(principal.email) : null, principal };
      },
      async verify(ctx, input) {
        const t = deps.tickets.take(input.ticket);
        if (!t || !ctx.principal || !ctx.key || !ctx.evaluate || t.userId !== ctx.principal.userId) return { principal: null, accountExists: ctx.principal !== null };
        return { principal: ctx.principal, amr: [...t.amr], key: ctx.key };
      },
    },
  });
}

/**
 * Ending one session, in a transaction: the session (and, for a provider session, the provider's
 * record and grants), its refresh family, and the access tokens it issued (denylisted: every
 * gateway refuses them within a second), with their events. Shared by the sessions API and by a
 * refresh that may no longer go on (auth.ts).
 */
import { SUBJECTS } from '@iam/contracts';
import { type InTransaction, event } from '@iam/platform';
import type { IdentityStores } from '../domain/ports';

export type SessionEndStores = Pick<IdentityStores, 'refreshTokens' | 'denylist' | 'sessions'>;

/** Denylists access tokens: the events of those not denylisted before, to publish. */
export async function denylistIn(tx: InTransaction<Pick<IdentityStores, 'denylist'>>, userId: string, tokens: ReadonlyArray<{ jti: string; expiresAt: Date }>) {
  const added: Array<{ jti: string; expiresAt: Date }> = [];
  for (const t of tokens) if (await tx.denylist.add(t.jti, userId, t.expiresAt)) added.push(t);
  return added.map((t) => event(SUBJECTS.tokenRevoked, { jti: t.jti, userId, expiresAt: t.expiresAt }));
}

/** Ends the user's live session `sessionId`; false when there is none. */
export async function endSessionIn(tx: InTransaction<SessionEndStores>, userId: string, sessionId: string): Promise<boolean> {
  const tokens = await tx.sessions.end(sessionId, userId);
  if (!tokens) return false;
  await tx.refreshTokens.revokeFamily(sessionId);
  await tx.publish([...(await denylistIn(tx, userId, tokens)), event(SUBJECTS.sessionEnded, { userId, sessionId, tokensRevoked: tokens.length })]);
  return true;
}

/**
 * The identity service's PostgreSQL stores put together (one store per file beside this one,
 * parameterised SQL over an EntityManager), the unit of work over them, and the purge.
 */
import { outboxUnitOfWork } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ClientRecord } from '../domain/clients';
import type { IdentityStores, UnitOfWork } from '../domain/ports';
import { PgClientStore } from './client-store';
import { PgDenylist } from './denylist-store';
import { PgEmailActionRequests } from './email-action-request-store';
import { PgEmailActions } from './email-action-store';
import { PgThrottle } from './email-throttle-store';
import { PgLockouts } from './lockout-store';
import { PgMfaChallenges } from './mfa-challenge-store';
import { PgFederatedIdentities, PgUpstreamAttempts } from './federation/federated-identity-store';
import { PgIdentityProviders } from './federation/identity-provider-store';
import { PgMfaStatus } from './mfa-status';
import { PgProviderGrants } from './oidc/pg-adapter';
import { PgPasskeys } from './passkey-store';
import { PgRecoveryCodes } from './recovery-code-store';
import { PgRefreshTokens } from './refresh-token-store';
import { PgSessions } from './session-store';
import { PgSubjects } from './subject-revocation-store';
import { PgTotp } from './totp-store';
import { PgWebauthnChallenges } from './webauthn-challenge-store';

/** `builtInClients`: the configuration's clients, found and listed in front of the stored ones. */
export function pgIdentityStores(m: EntityManager, builtInClients: readonly ClientRecord[] = []): IdentityStores {
  return {
    clients: new PgClientStore(m, builtInClients),
    refreshTokens: new PgRefreshTokens(m),
    lockouts: new PgLockouts(m),
    denylist: new PgDenylist(m),
    subjects: new PgSubjects(m),
    emailActions: new PgEmailActions(m),
    throttle: new PgThrottle(m),
    emailRequests: new PgEmailActionRequests(m),
    totp: new PgTotp(m),
    mfaStatus: new PgMfaStatus(m),
    recoveryCodes: new PgRecoveryCodes(m),
    mfaChallenges: new PgMfaChallenges(m),
    sessions: new PgSessions(m),
    providerGrants: new PgProviderGrants(m),
    passkeys: new PgPasskeys(m),
    webauthnChallenges: new PgWebauthnChallenges(m),
    identityProviders: new PgIdentityProviders(m),
    federatedIdentities: new PgFederatedIdentities(m),
    upstreamAttempts: new PgUpstreamAttempts(m),
  };
}

/** Transactions over the identity database; events go to the outbox in the same transaction. */
export function pgUnitOfWork(ds: DataSource, builtInClients: readonly ClientRecord[] = []): UnitOfWork {
  return outboxUnitOfWork(ds, (m) => pgIdentityStores(m, builtInClients));
}

/** Removes what can no longer matter: expired refresh tokens and denylist entries, stale failure counts. */
export async function purgeExpired(ds: DataSource, lockoutMinutes: number): Promise<void> {
  await ds.query(`DELETE FROM refresh_tokens WHERE expires_at < now() - interval '1 day'`);
  await ds.query('DELETE FROM revoked_access_tokens WHERE expires_at < now()');
  await ds.query('DELETE FROM revoked_subjects WHERE expires_at < now()');
  await ds.query('DELETE FROM mfa_challenges WHERE expires_at < now()');
  await ds.query('DELETE FROM webauthn_challenges WHERE expires_at < now()');
  await ds.query('DELETE FROM session_access_tokens WHERE expires_at < now()');
  await ds.query(`DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR ended_at < now() - interval '1 day'`);
  // Kept a month: a late directory event of a reset still finds its token consumed (not missing).
  await ds.query(`DELETE FROM email_action_tokens WHERE expires_at < now() - interval '30 days'`);
  await ds.query(`DELETE FROM email_action_throttle WHERE window_start < now() - interval '1 day'`);
  await ds.query(
    `DELETE FROM login_failures WHERE (locked_until IS NULL OR locked_until < now()) AND last_failed_at < now() - make_interval(mins => $1)`,
    [lockoutMinutes],
  );
}

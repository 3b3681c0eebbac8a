/** PostgreSQL stores of the identity service (parameterised SQL over an EntityManager). */
import { isUuid, outboxUnitOfWork, queryNamed } from '@iam/platform';
import type { DataSource, EntityManager } from 'typeorm';
import type { ClientRecord } from '../domain/clients';
import { PgEmailActionRequests, PgThrottle } from './email-request-stores';
import { PgPasskeys, PgRecoveryCodes, PgTotp } from './factor-stores';
import { PgMfaChallenges, PgSessions, PgWebauthnChallenges } from './mfa-stores';
import type { RefreshRecord } from '../domain/model';
import { PgClientStore } from './client-store';
import { PgFederatedIdentities, PgUpstreamAttempts } from './federation/federated-identity-store';
import { PgIdentityProviders } from './federation/identity-provider-store';
import { PgMfaStatus } from './mfa-status';
import { PgProviderGrants } from './oidc/pg-adapter';
import type { DenylistStore, EmailActionStore, EmailPurpose, IdentityStores, LockoutStore, RefreshTokenStore, SubjectRevocationStore, TokenSession, UnitOfWork } from '../domain/ports';

/**
 * One statement: concurrent attempts serialise on the row. A locked row is left as it is (no row
 * returned: refused); an expired lock starts the count again; the max-th reservation locks.
 */
const RESERVE_SQL = `INSERT INTO login_failures AS f (email_hash, failed_count, locked_until, last_failed_at)
       VALUES ($1, 1, CASE WHEN 1 >= $2 THEN now() + make_interval(mins => $3) END, now())
       ON CONFLICT (email_hash) DO UPDATE SET
         failed_count = CASE WHEN f.locked_until IS NOT NULL THEN 1 ELSE f.failed_count + 1 END,
         locked_until = CASE WHEN (CASE WHEN f.locked_until IS NOT NULL THEN 1 ELSE f.failed_count + 1 END) >= $2
                             THEN now() + make_interval(mins => $3) END,
         last_failed_at = now()
       WHERE f.locked_until IS NULL OR f.locked_until <= now()
       RETURNING failed_count`;

/**
 * The token a presentation of $1 may rotate: $1 itself while unrotated; else, when $1 was rotated
 * at most $G seconds ago (a client retrying a refresh whose answer it lost), its successor, or the
 * successor's successor and so on while each was superseded (rotated by such a retry, not by its
 * own use). `target` is the live token at the end of that chain, if any. With no grace period
 * ($G = 0) a rotated token is never followed: now() is when a statement began, which may be
 * before a concurrent rotation it then sees committed.
 */
const RETRY_CHAIN = (graceParam: string) => `chain AS (
         SELECT p.id, p.rotated_at, p.revoked_at, p.expires_at, p.replaced_by, 0 AS depth,
                (p.rotated_at IS NULL OR (${graceParam}::float8 > 0 AND p.rotated_at >= now() - make_interval(secs => ${graceParam}::float8))) AS follow
           FROM refresh_tokens p WHERE p.token_hash = $1
         UNION ALL
         SELECT n.id, n.rotated_at, n.revoked_at, n.expires_at, n.replaced_by, c.depth + 1, n.superseded
           FROM chain c JOIN refresh_tokens n ON n.id = c.replaced_by
          WHERE c.rotated_at IS NOT NULL AND c.follow AND c.depth < 20),
       target AS (
         SELECT id, depth FROM chain
          WHERE rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now())`;

/**
 * A refresh rotation in one statement (so one commit): the target (RETRY_CHAIN) is claimed only
 * if it is still live and unrotated (the UPDATE's row lock makes exactly one of concurrent claims
 * win), marked superseded when it is not the token presented, its successor inserted in the same
 * family with the family's expiry, and the user's subject revocation time read. With an access
 * token ($5 its jti, $6 its expiry; NULL without), the family's live session (its id is the
 * family's) is marked used and the token recorded against it, in the same statement.
 */
const ROTATE_SQL = `WITH RECURSIVE ${RETRY_CHAIN('$4')},
       claimed AS (
         UPDATE refresh_tokens t SET rotated_at = now(), replaced_by = $2, superseded = (target.depth > 0)
           FROM target
          WHERE t.id = target.id AND t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > now()
          RETURNING t.family_id, t.user_id, t.expires_at),
       successor AS (
         INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at)
         SELECT $2, family_id, user_id, $3, expires_at FROM claimed
         RETURNING family_id, user_id, expires_at),
       touched AS (
         UPDATE sessions s SET last_used_at = now() FROM successor
          WHERE $5::text IS NOT NULL AND s.id = successor.family_id AND s.ended_at IS NULL
          RETURNING s.id, s.amr, s.auth_time),
       recorded AS (
         INSERT INTO session_access_tokens (jti, session_id, expires_at) SELECT $5::text, id, $6::timestamptz FROM touched)
       SELECT successor.family_id, successor.user_id, successor.expires_at,
              (SELECT not_before FROM revoked_subjects r WHERE r.user_id = successor.user_id) AS not_before,
              touched.id AS session_id, touched.amr, touched.auth_time
         FROM successor LEFT JOIN touched ON true`;

/** A token, and whether a presentation of it may rotate a live token (RETRY_CHAIN). */
const FIND_SQL = `WITH RECURSIVE ${RETRY_CHAIN('$2')}
       SELECT t.id, t.family_id, t.user_id, t.expires_at, t.rotated_at, t.revoked_at, EXISTS (SELECT 1 FROM target) AS retryable
         FROM refresh_tokens t WHERE t.token_hash = $1`;

class PgRefreshTokens implements RefreshTokenStore {
  constructor(private readonly m: EntityManager) {}

  async startFamily(
    r: { id: string; familyId: string; userId: string; tokenHash: Buffer; expiresAt: Date },
    emailHash: Buffer,
    session?: { userAgent: string; ip: string; amr: readonly string[]; authTime: Date; access: { jti: string; expiresAt: Date } },
  ): Promise<{ subjectNotBefore: Date | null }> {
    if (session) {
      // A sign-in: the family, its session and the session's first access token in one statement.
      const [row] = await this.m.query<Array<{ not_before: Date | null }>>(
        `WITH cleared AS (DELETE FROM login_failures WHERE email_hash = $6),
              family AS (INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING family_id),
              started AS (
                INSERT INTO sessions (id, user_id, user_agent, ip, amr, auth_time, expires_at)
                SELECT family_id, $3::uuid, $7::text, $8::text, $9::text[], $10::timestamptz, $5::timestamptz FROM family RETURNING id),
              recorded AS (INSERT INTO session_access_tokens (jti, session_id, expires_at) SELECT $11::text, id, $12::timestamptz FROM started)
         SELECT (SELECT not_before FROM revoked_subjects WHERE user_id = $3) AS not_before`,
        [r.id, r.familyId, r.userId, r.tokenHash, r.expiresAt, emailHash, session.userAgent, session.ip, [...session.amr], session.authTime, session.access.jti, session.access.expiresAt],
      );
      return { subjectNotBefore: row?.not_before ?? null };
    }
    const [row] = await this.m.query<Array<{ not_before: Date | null }>>(
      `WITH cleared AS (DELETE FROM login_failures WHERE email_hash = $6)
       INSERT INTO refresh_tokens (id, family_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5)
       RETURNING (SELECT not_before FROM revoked_subjects WHERE user_id = $3) AS not_before`,
      [r.id, r.familyId, r.userId, r.tokenHash, r.expiresAt, emailHash],
    );
    return { subjectNotBefore: row?.not_before ?? null };
  }

  async rotate(
    hash: Buffer,
    next: { id: string; tokenHash: Buffer; access?: { jti: string; expiresAt: Date } },
    graceSeconds: number,
  ): Promise<{ familyId: string; userId: string; expiresAt: Date; subjectNotBefore: Date | null; session?: TokenSession } | null> {
    // Outside a transaction (every refresh): a named statement (queryNamed).
    const [row] = await queryNamed<{ family_id: string; user_id: string; expires_at: Date; not_before: Date | null; session_id: string | null; amr: string[] | null; auth_time: Date | null }>(
      this.m,
      'identity.refresh.rotate',
      ROTATE_SQL,
      [hash, next.id, next.tokenHash, graceSeconds, next.access?.jti ?? null, next.access?.expiresAt ?? null],
    );
    if (!row) return null;
    const session = row.session_id && row.auth_time ? { sid: row.session_id, amr: row.amr ?? [], authTime: row.auth_time } : undefined;
    return { familyId: row.family_id, userId: row.user_id, expiresAt: row.expires_at, subjectNotBefore: row.not_before, ...(session ? { session } : {}) };
  }

  async findByHash(hash: Buffer, graceSeconds = 0): Promise<RefreshRecord | null> {
    const [r] = await queryNamed<{ id: string; family_id: string; user_id: string; expires_at: Date; rotated_at: Date | null; revoked_at: Date | null; retryable: boolean }>(
      this.m,
      'identity.refresh.find',
      FIND_SQL,
      [hash, graceSeconds],
    );
    return r
      ? { id: r.id, familyId: r.family_id, userId: r.user_id, expiresAt: r.expires_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at, retryable: r.retryable }
      : null;
  }

  async revokeFamily(familyId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [familyId]);
    return n;
  }

  async revokeAllOfUser(userId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
    return n;
  }
}

class PgLockouts implements LockoutStore {
  constructor(private readonly m: EntityManager) {}

  async reserve(emailHash: Buffer, max: number, lockMinutes: number): Promise<{ allowed: boolean; count: number }> {
    // Every login's first statement, outside a transaction: a named statement (queryNamed).
    const [row] = await queryNamed<{ failed_count: number }>(this.m, 'identity.login.reserve', RESERVE_SQL, [emailHash, max, lockMinutes]);
    return row ? { allowed: true, count: row.failed_count } : { allowed: false, count: max };
  }

  async release(emailHash: Buffer, max: number): Promise<void> {
    await this.m.query(
      `UPDATE login_failures SET failed_count = greatest(failed_count - 1, 0),
              locked_until = CASE WHEN failed_count - 1 < $2 THEN NULL ELSE locked_until END
        WHERE email_hash = $1`,
      [emailHash, max],
    );
  }

  async clear(emailHash: Buffer): Promise<void> {
    await this.m.query('DELETE FROM login_failures WHERE email_hash = $1', [emailHash]);
  }

  async state(emailHash: Buffer): Promise<{ failedCount: number; lockedUntil: Date | null } | null> {
    const [r] = await this.m.query<Array<{ failed_count: number; locked_until: Date | null }>>(
      'SELECT failed_count, CASE WHEN locked_until > now() THEN locked_until END AS locked_until FROM login_failures WHERE email_hash = $1',
      [emailHash],
    );
    return r ? { failedCount: r.failed_count, lockedUntil: r.locked_until } : null;
  }
}

class PgSubjects implements SubjectRevocationStore {
  constructor(private readonly m: EntityManager) {}

  async revoke(userId: string, notBefore: Date, expiresAt: Date): Promise<{ notBefore: Date; expiresAt: Date }> {
    const [row] = await this.m.query<Array<{ not_before: Date; expires_at: Date }>>(
      `INSERT INTO revoked_subjects AS s (user_id, not_before, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (user_id) DO UPDATE SET not_before = greatest(s.not_before, $2), expires_at = greatest(s.expires_at, $3)
       RETURNING not_before, expires_at`,
      [userId, notBefore, expiresAt],
    );
    return { notBefore: row!.not_before, expiresAt: row!.expires_at };
  }

  async notBefore(...subjects: string[]): Promise<Date | null> {
    // Subjects are users and registry clients (UUIDs); a built-in client's id has no revocation.
    const ids = subjects.filter(isUuid);
    if (ids.length === 0) return null;
    const [row] = await this.m.query<Array<{ not_before: Date | null }>>(
      `SELECT max(not_before) AS not_before FROM revoked_subjects WHERE user_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
      ids,
    );
    return row?.not_before ?? null;
  }

  async active(): Promise<Array<{ userId: string; notBefore: Date; expiresAt: Date }>> {
    const rows = await this.m.query<Array<{
      user_id: string;
      not_before: Date;
      expires_at: Date;
    }>>('SELECT user_id, not_before, expires_at FROM revoked_subjects WHERE expires_at > now()');
    return rows.map((r) => ({ userId: r.user_id, notBefore: r.not_before, expiresAt: r.expires_at }));
  }
}

class PgDenylist implements DenylistStore {
  constructor(private readonly m: EntityManager) {}

  async add(jti: string, userId: string, expiresAt: Date): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      'INSERT INTO revoked_access_tokens (jti, user_id, expires_at) VALUES ($1, $2, $3) ON CONFLICT (jti) DO NOTHING RETURNING jti',
      [jti, userId, expiresAt],
    );
    return rows.length > 0;
  }

  async has(jti: string): Promise<boolean> {
    const rows = await this.m.query<unknown[]>('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [jti]);
    return rows.length > 0;
  }

  async active(): Promise<Array<{ jti: string; expiresAt: Date }>> {
    const rows = await this.m.query<Array<{ jti: string; expires_at: Date }>>('SELECT jti, expires_at FROM revoked_access_tokens WHERE expires_at > now()');
    return rows.map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
  }
}

class PgEmailActions implements EmailActionStore {
  constructor(private readonly m: EntityManager) {}

  async issue(t: { id: string; userId: string; purpose: EmailPurpose; tokenHash: Buffer; emailHash: Buffer; expiresAt: Date }): Promise<void> {
    await this.m.query(
      `WITH invalidated AS (
         UPDATE email_action_tokens SET invalidated_at = now()
          WHERE user_id = $2 AND purpose = $3 AND used_at IS NULL AND invalidated_at IS NULL)
       INSERT INTO email_action_tokens (id, user_id, purpose, token_hash, email_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [t.id, t.userId, t.purpose, t.tokenHash, t.emailHash, t.expiresAt],
    );
  }

  async claim(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null> {
    const [row] = await this.m.query<[Array<{ id: string; user_id: string; email_hash: Buffer }>, number]>(
      `UPDATE email_action_tokens SET used_at = now()
        WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND invalidated_at IS NULL AND expires_at > now()
        RETURNING id, user_id, email_hash`,
      [tokenHash, purpose],
    );
    const r = Array.isArray(row) ? row[0] : undefined;
    return r ? { id: r.id, userId: r.user_id, emailHash: r.email_hash } : null;
  }

  async pending(tokenHash: Buffer, purpose: EmailPurpose): Promise<{ id: string; userId: string; emailHash: Buffer } | null> {
    const [r] = await this.m.query<Array<{ id: string; user_id: string; email_hash: Buffer }>>(
      `SELECT id, user_id, email_hash FROM email_action_tokens
        WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND invalidated_at IS NULL AND expires_at > now()`,
      [tokenHash, purpose],
    );
    return r ? { id: r.id, userId: r.user_id, emailHash: r.email_hash } : null;
  }

  async consume(id: string, userId: string): Promise<{ outcome: 'consumed'; emailHash: Buffer } | { outcome: 'already' | 'missing' }> {
    const [row] = await this.m.query<Array<{ used_at: Date | null; email_hash: Buffer }>>(
      'SELECT used_at, email_hash FROM email_action_tokens WHERE id = $1 AND user_id = $2 FOR UPDATE',
      [id, userId],
    );
    if (!row) return { outcome: 'missing' };
    if (row.used_at) return { outcome: 'already' };
    await this.m.query('UPDATE email_action_tokens SET used_at = now() WHERE id = $1', [id]);
    return { outcome: 'consumed', emailHash: row.email_hash };
  }

  async release(id: string): Promise<void> {
    await this.m.query('UPDATE email_action_tokens SET used_at = NULL WHERE id = $1', [id]);
  }

  async invalidateAllOf(userId: string, keep?: Buffer): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>(
      'UPDATE email_action_tokens SET invalidated_at = now() WHERE user_id = $1 AND used_at IS NULL AND invalidated_at IS NULL AND ($2::bytea IS NULL OR email_hash <> $2::bytea)',
      [userId, keep ?? null],
    );
    return n;
  }
}

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

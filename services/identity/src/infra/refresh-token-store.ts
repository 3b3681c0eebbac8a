/** PostgreSQL store of refresh tokens: families, rotation with a retry grace, reuse detection. */
import { queryNamed } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { RefreshRecord } from '../domain/model';
import type { RefreshTokenStore, TokenSession } from '../domain/ports';

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

export class PgRefreshTokens implements RefreshTokenStore {
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

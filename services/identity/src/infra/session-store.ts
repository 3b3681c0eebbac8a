/**
 * PostgreSQL store of sessions (a refresh family's or a provider session's row: device, IP, amr,
 * auth_time) and the access tokens recorded under them.
 */
import { queryNamed } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import { revokeOidcSubject } from './oidc/pg-adapter';
import type { WritePart } from './oidc/token-writes';
import type { SessionRecord, SessionStore } from '../domain/ports';

interface SessionSql {
  id: string;
  user_id: string;
  user_agent: string;
  ip: string;
  amr: string[];
  auth_time: Date;
  created_at: Date;
  last_used_at: Date;
}

const session = (r: SessionSql): SessionRecord => ({
  id: r.id,
  userId: r.user_id,
  userAgent: r.user_agent,
  ip: r.ip,
  amr: r.amr,
  authTime: r.auth_time,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

const SESSION_COLUMNS = 'id, user_id, user_agent, ip, amr, auth_time, created_at, last_used_at';

export class PgSessions implements SessionStore {
  constructor(private readonly m: EntityManager) {}

  async start(s: { id: string; userId: string; userAgent: string; ip: string; amr: readonly string[]; authTime: Date; expiresAt: Date }): Promise<void> {
    await this.m.query('INSERT INTO sessions (id, user_id, user_agent, ip, amr, auth_time, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      s.id,
      s.userId,
      s.userAgent,
      s.ip,
      [...s.amr],
      s.authTime,
      s.expiresAt,
    ]);
  }

  async startOp(s: { id: string; opSessionUid: string; userId: string; userAgent: string; ip: string; amr: readonly string[]; authTime: Date; expiresAt: Date }): Promise<string> {
    const rows = await this.m.query<Array<{ id: string }>>(
      `INSERT INTO sessions AS t (id, op_session_uid, user_id, user_agent, ip, amr, auth_time, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (op_session_uid) WHERE op_session_uid IS NOT NULL DO UPDATE SET user_id = $3, user_agent = $4, ip = $5, amr = $6, auth_time = $7,
         expires_at = $8, last_used_at = now(), ended_at = NULL
       RETURNING id`,
      [s.id, s.opSessionUid, s.userId, s.userAgent, s.ip, [...s.amr], s.authTime, s.expiresAt],
    );
    return rows[0]!.id;
  }

  async touchOp(opSessionUid: string): Promise<string | null> {
    const rows = await this.m.query<[Array<{ id: string }>, number]>('UPDATE sessions SET last_used_at = now() WHERE op_session_uid = $1 AND ended_at IS NULL RETURNING id', [opSessionUid]);
    return rows[0]?.[0]?.id ?? null;
  }

  async opSessionId(opSessionUid: string): Promise<string | null> {
    const rows = await queryNamed<{ id: string }>(this.m, 'identity.sessions.op-id', 'SELECT id FROM sessions WHERE op_session_uid = $1 AND ended_at IS NULL', [opSessionUid]);
    return rows[0]?.id ?? null;
  }

  async touch(id: string): Promise<SessionRecord | null> {
    const rows = await this.m.query<[SessionSql[], number]>(`UPDATE sessions SET last_used_at = now() WHERE id = $1 AND ended_at IS NULL RETURNING ${SESSION_COLUMNS}`, [id]);
    const r = rows[0]?.[0];
    return r ? session(r) : null;
  }

  async recordToken(sessionId: string, jti: string, expiresAt: Date): Promise<void> {
    await this.m.query('INSERT INTO session_access_tokens (jti, session_id, expires_at) VALUES ($1, $2, $3)', [jti, sessionId, expiresAt]);
  }

  async listLive(userId: string): Promise<SessionRecord[]> {
    const rows = await this.m.query<SessionSql[]>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE user_id = $1 AND ended_at IS NULL AND expires_at > now()
         AND (op_session_uid IS NULL OR EXISTS (SELECT 1 FROM oidc_payloads p WHERE p.kind = 'Session' AND p.uid = s.op_session_uid AND (p.expires_at IS NULL OR p.expires_at > now())))
       ORDER BY last_used_at DESC, id LIMIT 200`,
      [userId],
    );
    return rows.map(session);
  }

  async end(id: string, userId: string): Promise<Array<{ jti: string; expiresAt: Date }> | null> {
    const rows = await this.m.query<[Array<{ op_session_uid: string | null }>, number]>(
      'UPDATE sessions SET ended_at = now() WHERE id = $1 AND user_id = $2 AND ended_at IS NULL RETURNING op_session_uid',
      [id, userId],
    );
    const ended = rows[0]?.[0];
    if (!ended) return null;
    if (ended.op_session_uid) {
      // The provider's session and every grant it signed in (their codes and refresh tokens).
      await this.m.query(
        `WITH s AS (DELETE FROM oidc_payloads WHERE kind = 'Session' AND uid = $1 RETURNING payload)
         DELETE FROM oidc_payloads WHERE grant_id IN (SELECT a.value->>'grantId' FROM s, jsonb_each(COALESCE(s.payload->'authorizations', '{}'::jsonb)) AS a)`,
        [ended.op_session_uid],
      );
    }
    const tokens = await this.m.query<Array<{ jti: string; expires_at: Date }>>('SELECT jti, expires_at FROM session_access_tokens WHERE session_id = $1 AND expires_at > now()', [
      id,
    ]);
    return tokens.map((t) => ({ jti: t.jti, expiresAt: t.expires_at }));
  }

  async endAllOf(userId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE sessions SET ended_at = now() WHERE user_id = $1 AND ended_at IS NULL', [userId]);
    // The provider's records of the account go in the same statement's transaction: its sessions,
    // grants, codes and refresh tokens (else an ended provider session would vanish from the list
    // and go on issuing tokens until the subject revocation's event got there).
    await revokeOidcSubject(this.m, userId);
    return n;
  }

  async clientTokens(id: string, userId: string, clientId: string): Promise<Array<{ jti: string; expiresAt: Date }>> {
    const rows = await this.m.query<Array<{ jti: string; expires_at: Date }>>(
      `SELECT t.jti, t.expires_at FROM session_access_tokens t JOIN sessions s ON s.id = t.session_id
       WHERE t.session_id = $1 AND s.user_id = $2 AND t.client_id = $3 AND t.expires_at > now()`,
      [id, userId, clientId],
    );
    return rows.map((t) => ({ jti: t.jti, expiresAt: t.expires_at }));
  }
}

/**
 * An access token the provider issues under a provider session: the session marked used (to the
 * minute) and, for a token the gateway verifies on its own, the token recorded under it (ending
 * the session denylists it), when the session is live. Written with the token request's other
 * writes (token-writes.ts).
 */
export function opTokenWrites(opSessionUid: string, record?: { jti: string; expiresAt: Date; clientId: string }): WritePart[] {
  const touch: WritePart = {
    shape: 'session-touch',
    values: [opSessionUid],
    // To the minute: a grant refreshed every few seconds does not rewrite its session each time.
    text: (p, guard) => `UPDATE sessions SET last_used_at = now() WHERE op_session_uid = ${p(1)}::text AND ended_at IS NULL AND last_used_at < now() - interval '1 minute' AND ${guard}`,
  };
  if (!record) return [touch];
  return [
    touch,
    {
      shape: 'session-token',
      values: [opSessionUid, record.jti, record.expiresAt, record.clientId],
      text: (p, guard) =>
        `INSERT INTO session_access_tokens (jti, session_id, expires_at, client_id) SELECT ${p(2)}::text, id, ${p(3)}::timestamptz, ${p(4)}::text FROM sessions WHERE op_session_uid = ${p(1)}::text AND ended_at IS NULL AND ${guard}`,
    },
  ];
}

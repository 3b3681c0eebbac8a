/** Linked identities and upstream attempts in PostgreSQL (parameterised SQL over an EntityManager). */
import type { EntityManager } from 'typeorm';
import type { FederatedIdentity, FederatedIdentityStore, UpstreamAttempt, UpstreamAttemptStore } from '../../domain/federated-identities';

interface IdentitySql {
  id: string;
  user_id: string;
  provider_id: string;
  issuer: string;
  subject: string;
  email: string;
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'id, user_id, provider_id, issuer, subject, email, created_at, last_used_at';

const toIdentity = (r: IdentitySql): FederatedIdentity => ({
  id: r.id,
  userId: r.user_id,
  providerId: r.provider_id,
  issuer: r.issuer,
  subject: r.subject,
  email: r.email,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export class PgFederatedIdentities implements FederatedIdentityStore {
  constructor(private readonly m: EntityManager) {}

  async find(providerId: string, issuer: string, subject: string): Promise<FederatedIdentity | null> {
    const [r] = await this.m.query<IdentitySql[]>(`SELECT ${COLUMNS} FROM federated_identities WHERE provider_id = $1 AND issuer = $2 AND subject = $3`, [providerId, issuer, subject]);
    return r ? toIdentity(r) : null;
  }

  async listOf(userId: string): Promise<FederatedIdentity[]> {
    const rows = await this.m.query<IdentitySql[]>(`SELECT ${COLUMNS} FROM federated_identities WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
    return rows.map(toIdentity);
  }

  async lockOf(userId: string): Promise<number> {
    const rows = await this.m.query<Array<{ id: string }>>('SELECT id FROM federated_identities WHERE user_id = $1 FOR UPDATE', [userId]);
    return rows.length;
  }

  async countOf(userId: string): Promise<number> {
    const [r] = await this.m.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM federated_identities WHERE user_id = $1', [userId]);
    return r?.n ?? 0;
  }

  async link(x: { id: string; userId: string; providerId: string; issuer: string; subject: string; email: string }): Promise<FederatedIdentity | null> {
    const [r] = await this.m.query<IdentitySql[]>(
      `INSERT INTO federated_identities (id, user_id, provider_id, issuer, subject, email, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, now())
       ON CONFLICT (provider_id, issuer, subject) DO NOTHING RETURNING ${COLUMNS}`,
      [x.id, x.userId, x.providerId, x.issuer, x.subject, x.email],
    );
    return r ? toIdentity(r) : null;
  }

  async used(id: string, email: string): Promise<void> {
    await this.m.query('UPDATE federated_identities SET last_used_at = now(), email = $2 WHERE id = $1', [id, email]);
  }

  async unlink(id: string, userId: string): Promise<FederatedIdentity | null> {
    const [rows] = await this.m.query<[IdentitySql[], number]>(`DELETE FROM federated_identities WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`, [id, userId]);
    const r = rows[0];
    return r ? toIdentity(r) : null;
  }
}

interface AttemptSql {
  provider_id: string;
  nonce: string;
  code_verifier: string;
  purpose: string;
  binding: string;
  user_id: string | null;
}

export class PgUpstreamAttempts implements UpstreamAttemptStore {
  constructor(private readonly m: EntityManager) {}

  async create(stateHash: Buffer, a: UpstreamAttempt, expiresAt: Date): Promise<void> {
    // Expired attempts go as new ones come (an index on expires_at keeps it cheap).
    await this.m.query('DELETE FROM upstream_sign_ins WHERE expires_at < now()');
    await this.m.query(
      'INSERT INTO upstream_sign_ins (state_hash, provider_id, nonce, code_verifier, purpose, binding, user_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [stateHash, a.providerId, a.nonce, a.codeVerifier, a.purpose, a.binding, a.userId, expiresAt],
    );
  }

  async take(stateHash: Buffer): Promise<UpstreamAttempt | null> {
    const [rows] = await this.m.query<[AttemptSql[], number]>(
      'DELETE FROM upstream_sign_ins WHERE state_hash = $1 RETURNING provider_id, nonce, code_verifier, purpose, binding, user_id, expires_at > now() AS live',
      [stateHash],
    );
    const r = rows[0] as (AttemptSql & { live: boolean }) | undefined;
    if (!r || !r.live) return null;
    return { providerId: r.provider_id, nonce: r.nonce, codeVerifier: r.code_verifier, purpose: r.purpose === 'link' ? 'link' : 'sign-in', binding: r.binding, userId: r.user_id };
  }
}

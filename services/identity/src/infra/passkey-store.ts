/** PostgreSQL store of passkeys (WebAuthn credentials). */
import type { EntityManager } from 'typeorm';
import type { PasskeyRecord, PasskeyStore } from '../domain/ports';

interface PasskeySql {
  id: string;
  user_id: string;
  credential_id: Buffer;
  public_key: Buffer;
  counter: string;
  transports: string[];
  device_type: string;
  backed_up: boolean;
  aaguid: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const passkey = (r: PasskeySql): PasskeyRecord => ({
  id: r.id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: r.transports,
  deviceType: r.device_type,
  backedUp: r.backed_up,
  aaguid: r.aaguid,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

const PASSKEY_COLUMNS = 'id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, aaguid, name, created_at, last_used_at';

export class PgPasskeys implements PasskeyStore {
  constructor(private readonly m: EntityManager) {}

  async add(p: Omit<PasskeyRecord, 'createdAt' | 'lastUsedAt'>): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      `INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, aaguid, name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (credential_id) DO NOTHING RETURNING id`,
      [p.id, p.userId, p.credentialId, p.publicKey, p.counter, [...p.transports], p.deviceType, p.backedUp, p.aaguid, p.name],
    );
    return rows.length > 0;
  }

  async listOf(userId: string): Promise<PasskeyRecord[]> {
    const rows = await this.m.query<PasskeySql[]>(`SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
    return rows.map(passkey);
  }

  async count(userId: string): Promise<number> {
    const [r] = await this.m.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [userId]);
    return r?.n ?? 0;
  }

  async findByCredentialId(credentialId: Buffer): Promise<PasskeyRecord | null> {
    const [r] = await this.m.query<PasskeySql[]>(`SELECT ${PASSKEY_COLUMNS} FROM passkeys WHERE credential_id = $1`, [credentialId]);
    return r ? passkey(r) : null;
  }

  async used(id: string, counter: number, backedUp: boolean): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE passkeys SET counter = $2, backed_up = $3, last_used_at = now()
       WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))`,
      [id, counter, backedUp],
    );
    return n > 0;
  }

  async rename(id: string, userId: string, name: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2', [id, userId, name]);
    return n > 0;
  }

  async remove(id: string, userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM passkeys WHERE id = $1 AND user_id = $2', [id, userId]);
    return n > 0;
  }

  async removeAll(userId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM passkeys WHERE user_id = $1', [userId]);
    return n;
  }
}

/**
 * PostgreSQL stores of second factors: TOTP secrets (sealed by the use case), recovery codes
 * (keyed digests with their scheme) and passkeys. Parameterised SQL over an EntityManager.
 */
import type { EntityManager } from 'typeorm';
import type { PasskeyRecord, PasskeyStore, RecoveryCodeScheme, RecoveryCodeStore, TotpStore } from '../domain/ports';

export class PgTotp implements TotpStore {
  constructor(private readonly m: EntityManager) {}

  async get(userId: string): Promise<{ sealedSecret: Buffer; active: boolean; activatedAt: Date | null; lastStep: number } | null> {
    const [r] = await this.m.query<Array<{ sealed_secret: Buffer; activated_at: Date | null; last_step: string }>>(
      'SELECT sealed_secret, activated_at, last_step FROM mfa_totp WHERE user_id = $1',
      [userId],
    );
    return r ? { sealedSecret: r.sealed_secret, active: r.activated_at !== null, activatedAt: r.activated_at, lastStep: Number(r.last_step) } : null;
  }

  async putPending(userId: string, sealedSecret: Buffer): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      `INSERT INTO mfa_totp AS t (user_id, sealed_secret) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET sealed_secret = $2, last_step = 0, created_at = now() WHERE t.activated_at IS NULL
       RETURNING user_id`,
      [userId, sealedSecret],
    );
    return rows.length > 0;
  }

  async activate(userId: string, step: number): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE mfa_totp SET activated_at = now(), last_step = $2 WHERE user_id = $1 AND activated_at IS NULL AND last_step < $2', [
      userId,
      step,
    ]);
    return n > 0;
  }

  async useStep(userId: string, step: number): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('UPDATE mfa_totp SET last_step = $2 WHERE user_id = $1 AND activated_at IS NOT NULL AND last_step < $2', [userId, step]);
    return n > 0;
  }

  async remove(userId: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM mfa_totp WHERE user_id = $1', [userId]);
    return n > 0;
  }
}

export class PgRecoveryCodes implements RecoveryCodeStore {
  constructor(private readonly m: EntityManager) {}

  async replace(userId: string, digests: readonly Buffer[]): Promise<void> {
    await this.m.query('DELETE FROM mfa_recovery_codes WHERE user_id = $1', [userId]);
    await this.m.query("INSERT INTO mfa_recovery_codes (id, user_id, code_hash, scheme) SELECT gen_random_uuid(), $1, h, 'hmac' FROM unnest($2::bytea[]) AS h", [userId, digests]);
  }

  async use(userId: string, digests: Readonly<Record<RecoveryCodeScheme, Buffer>>): Promise<boolean> {
    // Each row is compared with the digest of its own scheme: a code is never checked under another's.
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE mfa_recovery_codes SET used_at = now()
        WHERE id = (SELECT id FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL
                      AND ((scheme = 'hmac' AND code_hash = $2) OR (scheme = 'hmac-legacy' AND code_hash = $3) OR (scheme = 'sha256' AND code_hash = $4))
                    LIMIT 1)
          AND used_at IS NULL`,
      [userId, digests.hmac, digests['hmac-legacy'], digests.sha256],
    );
    return n > 0;
  }

  async countLeft(userId: string): Promise<number> {
    const [r] = await this.m.query<Array<{ n: number }>>('SELECT count(*)::int AS n FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL', [userId]);
    return r?.n ?? 0;
  }

  async unused(userId: string): Promise<{ left: number; madeAt: Date } | null> {
    const [r] = await this.m.query<Array<{ n: number; made_at: Date | null }>>(
      'SELECT count(*)::int AS n, max(created_at) AS made_at FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
      [userId],
    );
    return r && r.n > 0 && r.made_at ? { left: r.n, madeAt: r.made_at } : null;
  }

  async removeAll(userId: string): Promise<number> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM mfa_recovery_codes WHERE user_id = $1', [userId]);
    return n;
  }

  async rekeyLegacy(limit: number, rekey: (digest: Buffer) => Buffer): Promise<number> {
    const rows = await this.m.query<Array<{ id: string; code_hash: Buffer }>>(
      "SELECT id, code_hash FROM mfa_recovery_codes WHERE scheme = 'sha256' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
      [limit],
    );
    if (rows.length === 0) return 0;
    // The scheme guard keeps a row from being keyed twice, whoever else runs this.
    const [, n] = await this.m.query<[unknown, number]>(
      `UPDATE mfa_recovery_codes c SET code_hash = r.digest, scheme = 'hmac-legacy'
         FROM unnest($1::uuid[], $2::bytea[]) AS r(id, digest) WHERE c.id = r.id AND c.scheme = 'sha256'`,
      [rows.map((r) => r.id), rows.map((r) => rekey(r.code_hash))],
    );
    return n;
  }
}

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

/** A user's second factors at a glance, in one statement (asked at every sign-in). */
import { queryNamed } from '@iam/platform';
import type { EntityManager } from 'typeorm';
import type { MfaStatusStore } from '../domain/ports';

const STATUS_SQL = `SELECT EXISTS (SELECT 1 FROM mfa_totp WHERE user_id = $1 AND activated_at IS NOT NULL) AS totp,
       (SELECT count(*)::int FROM passkeys WHERE user_id = $1) AS passkeys,
       (SELECT count(*)::int FROM mfa_recovery_codes WHERE user_id = $1 AND used_at IS NULL) AS left`;

export class PgMfaStatus implements MfaStatusStore {
  constructor(private readonly m: EntityManager) {}

  async get(userId: string): Promise<{ totp: boolean; passkeys: number; recoveryCodesLeft: number }> {
    const [r] = await queryNamed<{ totp: boolean; passkeys: number; left: number }>(this.m, 'identity.mfa.status', STATUS_SQL, [userId]);
    return { totp: r?.totp ?? false, passkeys: r?.passkeys ?? 0, recoveryCodesLeft: r?.left ?? 0 };
  }
}

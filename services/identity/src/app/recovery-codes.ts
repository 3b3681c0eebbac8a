/**
 * Recovery codes (DESIGN §5; ASVS 5.0 V6.5.2): ten single-use codes of 24 characters of a
 * 32-letter unambiguous alphabet (120 bits each), shown once as XXXX-XXXX-XXXX-XXXX-XXXX-XXXX.
 * Only a keyed digest is stored: HMAC-SHA-256 of "<user id>:<code>" under a random key kept sealed
 * under JWT_KEY_ENCRYPTION_KEY (infra/sealed-secrets.ts), never in the clear, so a copy of the
 * database alone cannot test a guess, and a rotation of the key-encryption key keeps the codes.
 *
 * Codes made before this scheme were 50-bit and stored as SHA-256("<user id>:<code>"), testable
 * offline by anyone with the database (the user id is every token's `sub`). At start identity
 * re-keys every such row once: the new digest is HMAC(key, old digest), scheme 'hmac-legacy', so
 * no unkeyed digest remains, and a legacy code still verifies (its SHA-256, then the HMAC).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { sha256 } from '@iam/platform';
import type { IdentityStores, RecoveryCodeScheme, UnitOfWork } from '../domain/ports';

export const RECOVERY_CODE_COUNT = 10;
/** No 0/O or 1/I: 32 letters, 5 bits each. */
export const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** 24 characters × 5 bits = 120 bits (ASVS asks for at least 112). */
export const RECOVERY_CODE_LENGTH = 24;
const GROUP = 4;

/** A new code: 24 characters (each byte's low 5 bits: 256 is a multiple of 32, so uniform), in groups of four. */
export function newRecoveryCode(): string {
  let s = '';
  for (const b of randomBytes(RECOVERY_CODE_LENGTH)) s += RECOVERY_ALPHABET[b & 31];
  return s.match(new RegExp(`.{${GROUP}}`, 'g'))!.join('-');
}

/** What a person types: any case, spaces and dashes anywhere. */
export const normaliseRecoveryCode = (code: string): string => code.toUpperCase().replace(/[\s-]/g, '');

const hmac = (key: Buffer, data: string | Buffer): Buffer => createHmac('sha256', key).update(data).digest();

/** The digest a code is stored as (scheme 'hmac'). */
export function recoveryDigest(key: Buffer, userId: string, code: string): Buffer {
  return hmac(key, `${userId}:${normaliseRecoveryCode(code)}`);
}

/** A legacy row's SHA-256 digest re-keyed (scheme 'hmac-legacy'). */
export const rekeyedLegacyDigest = (key: Buffer, sha256Digest: Buffer): Buffer => hmac(key, sha256Digest);

/** The digest a presented code has under each scheme: a row is compared with its own scheme's. */
export function presentedDigests(key: Buffer, userId: string, code: string): Record<RecoveryCodeScheme, Buffer> {
  const legacy = sha256(`${userId}:${normaliseRecoveryCode(code)}`);
  return { hmac: recoveryDigest(key, userId, code), 'hmac-legacy': rekeyedLegacyDigest(key, legacy), sha256: legacy };
}

/**
 * Re-keys every legacy (scheme 'sha256') row, in batches of one transaction each; safe to run on
 * every replica at once (rows are locked and skipped, and a row is re-keyed only while still
 * 'sha256'). How many rows it re-keyed.
 */
export async function rekeyLegacyRecoveryCodes(uow: UnitOfWork<Pick<IdentityStores, 'recoveryCodes'>>, key: Buffer, batch = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await uow.run((tx) => tx.recoveryCodes.rekeyLegacy(batch, (d) => rekeyedLegacyDigest(key, d)));
    total += n;
    if (n === 0) return total;
  }
}

/**
 * A TOTP factor brought by the directory's bulk import (issue #39: a Keycloak export's OTP
 * credentials), so imported users keep their authenticator app. Only the directory calls it (its
 * signed call assertion, checked by the gRPC binding). The secret is sealed as an enrolled one is
 * (AES-256-GCM under a key derived from JWT_KEY_ENCRYPTION_KEY, AAD = the user id) and the factor
 * is active at once. Parameters the verifier cannot check (it computes HMAC-SHA-1, 6 digits, 30 s)
 * are refused, never stored to fail at sign-in. A rerun with the same secret changes nothing; an
 * active factor with another secret is never replaced. Audited as `identity.mfa.enrolled`
 * (factor "totp", reason "import"); no secret in events or logs. No "factor added" mail: the
 * factor is the one the user already had.
 */
import { timingSafeEqual } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, isUuid } from '@iam/platform';
import { type SealingKeys, totpAad } from '../domain/sealing';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS, base32Decode } from '../domain/totp';

export interface ImportedTotp {
  readonly userId: string;
  /** Base32. */
  readonly secret: string;
  readonly algorithm: string;
  readonly digits: number;
  readonly period: number;
}

export type ImportTotpOutcome = 'enrolled' | 'unchanged';

/** Shortest and longest secret accepted (RFC 4226 §4: at least 128 bits; 160 recommended). */
const MIN_SECRET_BYTES = 16;
const MAX_SECRET_BYTES = 128;

/** The secret's bytes, or VALIDATION naming each parameter the verifier cannot check. */
export function checkImportedTotp(t: Omit<ImportedTotp, 'userId'>): Buffer {
  const errors: Array<{ field: string; message: string }> = [];
  const secret = base32Decode(t.secret);
  if (!secret) errors.push({ field: 'secret', message: 'must be base32' });
  else if (secret.length < MIN_SECRET_BYTES || secret.length > MAX_SECRET_BYTES) errors.push({ field: 'secret', message: `must be ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes` });
  if (t.algorithm.toUpperCase().replace(/^HMAC-?/, '') !== 'SHA1') errors.push({ field: 'algorithm', message: 'must be SHA1 (the only one the verifier checks)' });
  if (t.digits !== TOTP_DIGITS) errors.push({ field: 'digits', message: `must be ${TOTP_DIGITS}` });
  if (t.period !== TOTP_PERIOD_SECONDS) errors.push({ field: 'period', message: `must be ${TOTP_PERIOD_SECONDS}` });
  if (errors.length > 0 || !secret) throw AppError.validation('This TOTP factor cannot be imported.', errors);
  return secret;
}

export function createImportTotp(deps: {
  totpKeys: SealingKeys;
  uow: UnitOfWork<Pick<IdentityStores, 'totp'>>;
  stores: Pick<IdentityStores, 'totp'>;
  directory: Pick<Directory, 'principal'>;
}): (t: ImportedTotp) => Promise<ImportTotpOutcome> {
  const { totpKeys, uow, stores, directory } = deps;
  const sameSecret = (userId: string, sealed: Buffer, secret: Buffer) => {
    const stored = totpKeys.open(sealed, totpAad(userId));
    return stored.length === secret.length && timingSafeEqual(stored, secret);
  };
  return async (t) => {
    if (!isUuid(t.userId)) throw AppError.validation('userId must be a UUID.', [{ field: 'userId', message: 'must be a UUID' }]);
    const secret = checkImportedTotp(t);
    if (!(await directory.principal(t.userId))) throw AppError.notFound('No such user.');
    const existing = await stores.totp.get(t.userId);
    if (existing?.active) {
      if (sameSecret(t.userId, existing.sealedSecret, secret)) return 'unchanged';
      throw AppError.conflict('Another TOTP factor is active for this user; it is never replaced by an import.');
    }
    return uow.run(async (tx) => {
      if (!(await tx.totp.putActive(t.userId, totpKeys.seal(secret, totpAad(t.userId))))) {
        // Activated meanwhile: by the same import run twice at once, or by the user.
        const now = await tx.totp.get(t.userId);
        if (now && sameSecret(t.userId, now.sealedSecret, secret)) return 'unchanged';
        throw AppError.conflict('Another TOTP factor is active for this user; it is never replaced by an import.');
      }
      await tx.publish([event(SUBJECTS.mfaEnrolled, { userId: t.userId, factor: 'totp', failures: 0, reason: 'import', recoveryCodesLeft: 0, credential: '', name: '' })]);
      return 'enrolled';
    });
  };
}

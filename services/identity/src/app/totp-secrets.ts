/**
 * TOTP secrets (RFC 6238, DESIGN §5), shared by the enrolment at sign-in (second-factor.ts) and
 * the account's (my-factors.ts): a pending secret sealed with a key outside the database
 * (AES-256-GCM, AAD = the user id), shown once, active after a first right code; each step is
 * accepted once.
 */
import { AppError } from '@iam/platform';
import { type SealingKeys, totpAad } from '../domain/sealing';
import type { Directory, IdentityStores } from '../domain/ports';
import { base32Encode, matchTotp, newTotpSecret, otpauthUri } from '../domain/totp';

export interface TotpEnrolment {
  readonly secret: string;
  readonly otpauthUri: string;
}

export interface TotpSecrets {
  /** A new pending secret (replacing a pending one); CONFLICT when one is active; NOT_FOUND for an unknown user. */
  pending(userId: string): Promise<TotpEnrolment>;
  /** The pending secret again (a page shown again after a wrong code), or a new one. */
  pendingAgain(userId: string): Promise<TotpEnrolment>;
  /** The step a right, unused code of the user's TOTP is (active or pending per `active`); null otherwise. */
  step(userId: string, code: string, active: boolean): Promise<number | null>;
}

export function createTotpSecrets(deps: {
  /** Keys sealing TOTP secrets (derived from JWT_KEY_ENCRYPTION_KEY and its previous ones, never in the database). */
  totpKeys: SealingKeys;
  /** The issuer authenticator apps show. */
  issuer: string;
  stores: Pick<IdentityStores, 'totp'>;
  directory: Pick<Directory, 'principal'>;
}): TotpSecrets {
  const { totpKeys, stores, directory } = deps;
  const sealSecret = (userId: string, secret: Buffer) => totpKeys.seal(secret, totpAad(userId));
  const openSecret = (userId: string, sealed: Buffer) => totpKeys.open(sealed, totpAad(userId));
  const shown = (secret: Buffer, email: string): TotpEnrolment => ({ secret: base32Encode(secret), otpauthUri: otpauthUri(secret, deps.issuer, email) });

  async function pending(userId: string): Promise<TotpEnrolment> {
    const principal = await directory.principal(userId);
    if (!principal) throw AppError.notFound('No such user.');
    const secret = newTotpSecret();
    if (!(await stores.totp.putPending(userId, sealSecret(userId, secret)))) throw AppError.conflict('TOTP is already active; remove it first.');
    return shown(secret, principal.email);
  }

  return {
    pending,

    async pendingAgain(userId) {
      const t = await stores.totp.get(userId);
      const principal = t && !t.active ? await directory.principal(userId) : null;
      if (t && !t.active && principal) return shown(openSecret(userId, t.sealedSecret), principal.email);
      return pending(userId);
    },

    async step(userId, code, active) {
      const t = await stores.totp.get(userId);
      if (!t || t.active !== active) return null;
      return matchTotp(openSecret(userId, t.sealedSecret), code, Date.now(), t.lastStep);
    },
  };
}

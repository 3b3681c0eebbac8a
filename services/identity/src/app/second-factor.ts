/**
 * Second factors at sign-in (DESIGN §5): the single-use mfa token that stands between a right
 * password and its second factor, and the factor's check (a TOTP code, each accepted once; a
 * recovery code, single use; a passkey's assertion), or the enrolment an MFA_REQUIRED_ROLES member
 * (or a step-up) makes with an enrolment-only token. Sign-in (the REST login, the provider's hosted
 * sign-in) asks `challenge` after the password and `redeem` with the factor; failed factors count
 * toward the login lockout of the account's email. The account's own management of its factors is
 * my-factors.ts; an administrator's reset is `reset` here.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, type Logger, event, randomToken, sha256 } from '@iam/platform';
import type { SealingKeys } from '../domain/sealing';
import type { Principal } from '../domain/model';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Directory, IdentityStores, MfaChallengeRecord, MfaPurpose, UnitOfWork } from '../domain/ports';
import { factorAddedEvent } from './factor-notice';
import type { PasskeyUseCases } from './passkeys';
import { presentedDigests } from './recovery-codes';
import { type TotpEnrolment, createTotpSecrets } from './totp-secrets';

export type { TotpEnrolment } from './totp-secrets';

export interface SecondFactorSettings {
  /** Keys sealing TOTP secrets (derived from JWT_KEY_ENCRYPTION_KEY and its previous ones, never in the database). */
  readonly totpKeys: SealingKeys;
  /** The issuer authenticator apps show. */
  readonly issuer: string;
  /** MFA_REQUIRED_ROLES: members get no token without a second factor. */
  readonly requiredRoles: readonly string[];
  readonly maxFailedAttempts: number;
  readonly lockoutMinutes: number;
  /** HMAC-SHA-256 key of recovery codes' digests (derived from JWT_KEY_ENCRYPTION_KEY, never in the database). */
  readonly recoveryKey: Buffer;
}

export const MFA_TOKEN_SECONDS = 300;

export type MfaMethod = 'totp' | 'recovery_code' | 'webauthn';

export interface MfaChallenge {
  readonly mfaToken: string;
  readonly methods: readonly MfaMethod[];
  readonly enrolmentRequired: boolean;
  readonly expiresIn: number;
}

/** A TOTP code, a recovery code, or a passkey's assertion (AuthenticationResponseJSON) for `webauthnOptions`. */
export type Factor =
  | { readonly code: string }
  | { readonly recoveryCode: string }
  | { readonly webauthn: unknown }
  /** Enrolment only: a passkey registered with `passkeyEnrolmentOptions` (its registration proves it, with user verification). */
  | { readonly newPasskey: { readonly name: string; readonly response: unknown } };

export interface MfaStatus {
  readonly totp: boolean;
  readonly passkeys: number;
  readonly recoveryCodesLeft: number;
}

export interface SecondFactorUseCases {
  /** After a right password: null when the account signs in with it alone, else its challenge. */
  challenge(principal: Principal, emailHash: Buffer, opts?: { force?: boolean }): Promise<MfaChallenge | null>;
  /** Whether the account needs a second factor to sign in (enrolled, or its roles require one); nothing is written. */
  required(principal: Principal): Promise<boolean>;
  /**
   * Whether one of the principal's roles is in MFA_REQUIRED_ROLES: then no token is issued from a
   * sign-in without a second factor, also when the role came after the sign-in (a refresh, a code).
   */
  policyRequires(principal: Principal): boolean;
  /**
   * Checks a factor against an mfa token and uses the token up. UNAUTHENTICATED for an unknown,
   * used or expired token, a locked account, or a wrong or replayed factor (counted toward the
   * lockout). Returns who signed in and how (RFC 8176 amr).
   */
  redeem(mfaToken: string, factor: Factor): Promise<{ userId: string; emailHash: Buffer; amr: string[] }>;
  /** A verify mfa token of an account with passkeys: request options naming them (then `redeem` with `webauthn`). */
  webauthnOptions(mfaToken: string): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** An enrolment-only mfa token: creation options for a passkey (then `redeem` with `newPasskey`). */
  passkeyEnrolmentOptions(mfaToken: string): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** An enrolment-only mfa token: a pending TOTP secret, activated by `redeem` with its code. */
  enrolWithToken(mfaToken: string): Promise<TotpEnrolment>;
  status(userId: string): Promise<MfaStatus>;
  /** An administrator's reset: every factor of the user removed, with the reason recorded. */
  reset(userId: string, reason: string): Promise<void>;
}

/** The refusal of an unknown, used or expired mfa token (the hosted pages start the sign-in again on it). */
export const MFA_TOKEN_INVALID = 'The mfa token is invalid, used or expired.';
const INVALID_FACTOR = 'The second factor is incorrect.';
const MFA_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

type Stores = Pick<IdentityStores, 'totp' | 'mfaStatus' | 'recoveryCodes' | 'mfaChallenges' | 'lockouts' | 'passkeys'>;

export function createSecondFactorUseCases(deps: {
  settings: SecondFactorSettings;
  uow: UnitOfWork<Stores>;
  stores: Stores;
  directory: Directory;
  /** Passkeys as a second factor (absent: TOTP and recovery codes only). */
  passkeys?: Pick<PasskeyUseCases, 'factorOptions' | 'verify' | 'registrationOptions' | 'register'>;
  logger: Logger;
}): SecondFactorUseCases {
  const { settings: s, uow, stores, directory } = deps;
  const required = new Set(s.requiredRoles);

  const totp = createTotpSecrets({ totpKeys: s.totpKeys, issuer: s.issuer, stores, directory });

  function status(userId: string): Promise<MfaStatus> {
    return stores.mfaStatus.get(userId);
  }

  async function findChallenge(mfaToken: string) {
    if (!MFA_TOKEN_RE.test(mfaToken)) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
    const c = await stores.mfaChallenges.find(sha256(mfaToken));
    if (!c) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
    return c;
  }

  /** Checks the factor; the factor used, or null when it is wrong (nothing used up). */
  async function check(c: MfaChallengeRecord, factor: Factor): Promise<'totp' | 'recovery_code' | 'hwk' | 'swk' | null> {
    const { userId, purpose } = c;
    if ('newPasskey' in factor) {
      if (purpose !== 'enrol' || !deps.passkeys) return null;
      try {
        const p = await deps.passkeys.register(userId, factor.newPasskey.name, factor.newPasskey.response);
        return p.backedUp || p.deviceType === 'multiDevice' ? 'swk' : 'hwk';
      } catch (err) {
        if (err instanceof AppError && (err.code === 'VALIDATION' || err.code === 'CONFLICT')) return null;
        throw err;
      }
    }
    if ('webauthn' in factor) {
      if (purpose === 'enrol' || !deps.passkeys) return null;
      const a = await deps.passkeys.verify(factor.webauthn, 'factor');
      return a && a.userId === userId && a.mfaChallengeId === c.id ? a.amr : null;
    }
    if ('code' in factor) {
      if (purpose === 'enrol') {
        const step = await totp.step(userId, factor.code, false);
        return step !== null && (await stores.totp.activate(userId, step)) ? 'totp' : null;
      }
      const step = await totp.step(userId, factor.code, true);
      return step !== null && (await stores.totp.useStep(userId, step)) ? 'totp' : null;
    }
    if (purpose === 'enrol') return null;
    return (await stores.recoveryCodes.use(userId, presentedDigests(s.recoveryKey, userId, factor.recoveryCode))) ? 'recovery_code' : null;
  }

  return {
    async required(principal) {
      const st = await status(principal.userId);
      return st.totp || st.passkeys > 0 || principal.roles.some((r) => required.has(r));
    },

    policyRequires: (principal) => principal.roles.some((r) => required.has(r)),

    async challenge(principal, emailHash, opts) {
      const st = await status(principal.userId);
      const enrolled = st.totp || st.passkeys > 0;
      // `force`: step-up (the OP's acr_values asked for mfa): an account with no factor enrols one.
      const mustEnrol = !enrolled && (opts?.force === true || principal.roles.some((r) => required.has(r)));
      if (!enrolled && !mustEnrol) return null;
      const mfaToken = randomToken(32);
      const purpose: MfaPurpose = enrolled ? 'verify' : 'enrol';
      await stores.mfaChallenges.create({
        id: randomUUID(),
        userId: principal.userId,
        emailHash,
        tokenHash: sha256(mfaToken),
        purpose,
        expiresAt: new Date(Date.now() + MFA_TOKEN_SECONDS * 1000),
      });
      const methods: MfaMethod[] = enrolled
        ? [...(st.totp ? (['totp'] as const) : []), ...(st.passkeys > 0 && deps.passkeys ? (['webauthn'] as const) : []), ...(st.recoveryCodesLeft > 0 ? (['recovery_code'] as const) : [])]
        : ['totp'];
      return {
        mfaToken,
        methods,
        enrolmentRequired: !enrolled,
        expiresIn: MFA_TOKEN_SECONDS,
      };
    },

    async redeem(mfaToken, factor) {
      const c = await findChallenge(mfaToken);
      // An authenticator app this enrolment activates is mailed to the user (a passkey's
      // registration mails its own): the address is asked for before anything is activated.
      const mailTo = c.purpose === 'enrol' && 'code' in factor ? await directory.principal(c.userId) : null;
      // As a login: the attempt is reserved before the factor is checked, so at most the limit
      // of guesses is checked per lockout window, however many arrive at once.
      const slot = await stores.lockouts.reserve(c.emailHash, s.maxFailedAttempts, s.lockoutMinutes);
      const kind = 'code' in factor ? 'totp' : 'webauthn' in factor || 'newPasskey' in factor ? 'webauthn' : 'recovery_code';
      let used: 'totp' | 'recovery_code' | 'hwk' | 'swk' | null = null;
      if (slot.allowed) {
        try {
          used = await check(c, factor);
        } catch (err) {
          await stores.lockouts.release(c.emailHash, s.maxFailedAttempts);
          throw err;
        }
      }
      if (!used || !slot.allowed) {
        const lockedNow = slot.allowed && slot.count >= s.maxFailedAttempts;
        if (lockedNow) deps.logger.warn({ failures: slot.count }, 'account locked after repeated failed second factors');
        await uow.run((tx) =>
          tx.publish([
            event(SUBJECTS.mfaFailed, {
              userId: c.userId,
              factor: kind,
              failures: slot.count,
              reason: slot.allowed ? 'invalid_factor' : 'locked',
              recoveryCodesLeft: 0,
              credential: '',
              name: '',
            }),
            ...(lockedNow
              ? [
                  event(SUBJECTS.accountLocked, {
                    userId: c.userId,
                    failures: slot.count,
                    reason: '',
                  }),
                ]
              : []),
          ]),
        );
        throw AppError.unauthenticated(INVALID_FACTOR);
      }
      const left = await stores.recoveryCodes.countLeft(c.userId);
      const added = used === 'totp' ? mailTo : null;
      const consumed = await uow.run(async (tx) => {
        if (!(await tx.mfaChallenges.consume(c.id))) return false;
        const e = {
          userId: c.userId,
          factor: used === 'hwk' || used === 'swk' ? 'webauthn' : used,
          failures: 0,
          reason: '',
          recoveryCodesLeft: left,
          credential: '',
          name: '',
        };
        await tx.publish([
          // A new passkey's registration published its own enrolment.
          ...(c.purpose === 'enrol' && !('newPasskey' in factor) ? [event(SUBJECTS.mfaEnrolled, e)] : []),
          ...(added ? [factorAddedEvent(added, 'totp', '')] : []),
          event(used === 'recovery_code' ? SUBJECTS.recoveryCodeUsed : SUBJECTS.mfaVerified, e),
        ]);
        return true;
      });
      if (!consumed) throw AppError.unauthenticated(MFA_TOKEN_INVALID);
      return {
        userId: c.userId,
        emailHash: c.emailHash,
        // RFC 8176: a recovery code is a one-time password too; a passkey is hwk or swk.
        amr: ['pwd', used === 'hwk' || used === 'swk' ? used : 'otp', 'mfa'],
      };
    },

    async webauthnOptions(mfaToken) {
      const c = await findChallenge(mfaToken);
      if (c.purpose !== 'verify' || !deps.passkeys || (await stores.passkeys.count(c.userId)) === 0) throw AppError.conflict('This account has no passkey: answer with another factor.');
      return deps.passkeys.factorOptions(c.userId, c.id);
    },

    async passkeyEnrolmentOptions(mfaToken) {
      const c = await findChallenge(mfaToken);
      if (c.purpose !== 'enrol' || !deps.passkeys) throw AppError.conflict('This account has a second factor already: answer with it.');
      return deps.passkeys.registrationOptions(c.userId);
    },

    async enrolWithToken(mfaToken) {
      const c = await findChallenge(mfaToken);
      if (c.purpose !== 'enrol') throw AppError.conflict('This account has a second factor already: answer with it.');
      // Asked again (a page shown again after a wrong code): the same pending secret, already in the app.
      return totp.pendingAgain(c.userId);
    },

    status,

    async reset(userId, reason) {
      await uow.run(async (tx) => {
        await tx.totp.remove(userId);
        await tx.recoveryCodes.removeAll(userId);
        await tx.passkeys.removeAll(userId);
        await tx.publish([
          event(SUBJECTS.mfaReset, {
            userId,
            factor: '',
            failures: 0,
            reason,
            recoveryCodesLeft: 0,
            credential: '',
            name: '',
          }),
        ]);
      });
    },
  };
}

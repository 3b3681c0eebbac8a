/**
 * The account's own second factors (DESIGN §5; `/api/v1/me/mfa…`, `/api/v1/me/passkeys…`): the
 * caller reads and manages its authenticator app, recovery codes and passkeys. Every call needs a
 * first-party token, and adding or removing a factor and new recovery codes a sign-in within five
 * minutes too (account-access.ts; issue #34 item 2). Every factor added is mailed to the user
 * (identity.factor.added, in the transaction that adds it).
 */
import { SUBJECTS } from '@iam/contracts';
import { type AccessClaims, AppError, event } from '@iam/platform';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';
import type { AccountAccess } from './account-access';
import { factorAddedEvent, noticeAccount } from './factor-notice';
import type { PasskeyUseCases, PasskeyView } from './passkeys';
import { RECOVERY_CODE_COUNT, newRecoveryCode, recoveryDigest } from './recovery-codes';
import type { MfaStatus } from './second-factor';
import type { TotpEnrolment, TotpSecrets } from './totp-secrets';

export interface MyFactorUseCases {
  status(claims: AccessClaims): Promise<MfaStatus>;
  /** A pending secret (CONFLICT when TOTP is active). Needs a recent sign-in. */
  startTotp(claims: AccessClaims): Promise<TotpEnrolment>;
  /** VALIDATION (field code) for a wrong code; CONFLICT when no enrolment is pending. Needs a recent sign-in; mailed. */
  activateTotp(claims: AccessClaims, code: string): Promise<void>;
  /** NOT_FOUND without TOTP. Needs a recent sign-in. */
  removeTotp(claims: AccessClaims): Promise<void>;
  /** The new set, shown once (the old one is gone); CONFLICT with no factor to back up. Needs a recent sign-in. */
  newRecoveryCodes(claims: AccessClaims): Promise<string[]>;
  /** Creation options for a new passkey. Needs a recent sign-in (they are the first step of adding one). */
  passkeyOptions(claims: AccessClaims): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** As PasskeyUseCases.register. Needs a recent sign-in; mailed. */
  registerPasskey(claims: AccessClaims, name: string, response: unknown): Promise<PasskeyView>;
  listPasskeys(claims: AccessClaims): Promise<PasskeyView[]>;
  renamePasskey(claims: AccessClaims, id: string, name: string): Promise<PasskeyView>;
  /** NOT_FOUND for another user's or an unknown passkey. Needs a recent sign-in. */
  removePasskey(claims: AccessClaims, id: string): Promise<void>;
}

type Stores = Pick<IdentityStores, 'totp' | 'mfaStatus' | 'recoveryCodes' | 'passkeys'>;

export function createMyFactorUseCases(deps: {
  access: AccountAccess;
  totp: TotpSecrets;
  /** HMAC-SHA-256 key of recovery codes' digests. */
  recoveryKey: Buffer;
  passkeys: Pick<PasskeyUseCases, 'registrationOptions' | 'register' | 'list' | 'rename' | 'remove'>;
  uow: UnitOfWork<Stores>;
  stores: Stores;
  directory: Pick<Directory, 'principal'>;
}): MyFactorUseCases {
  const { access, uow, stores } = deps;
  const factorEvent = (userId: string, factor: string, recoveryCodesLeft = 0) => ({ userId, factor, failures: 0, reason: '', recoveryCodesLeft, credential: '', name: '' });

  return {
    async status(claims) {
      await access.firstParty(claims);
      return stores.mfaStatus.get(claims.sub);
    },

    async startTotp(claims) {
      await access.factorChange(claims);
      return deps.totp.pending(claims.sub);
    },

    async activateTotp(claims, code) {
      await access.factorChange(claims);
      const userId = claims.sub;
      const t = await stores.totp.get(userId);
      if (!t || t.active) throw AppError.conflict('No TOTP enrolment is pending: start one first.');
      const step = await deps.totp.step(userId, code, false);
      if (step === null) throw AppError.validation('The code is incorrect.', [{ field: 'code', message: 'is incorrect' }]);
      const account = await noticeAccount(deps.directory, userId);
      await uow.run(async (tx) => {
        if (!(await tx.totp.activate(userId, step))) throw AppError.conflict('No TOTP enrolment is pending: start one first.');
        await tx.publish([event(SUBJECTS.mfaEnrolled, factorEvent(userId, 'totp')), factorAddedEvent(account, 'totp', '')]);
      });
    },

    async removeTotp(claims) {
      await access.factorChange(claims);
      await uow.run(async (tx) => {
        if (!(await tx.totp.remove(claims.sub))) throw AppError.notFound('No TOTP is enrolled.');
        // Recovery codes back a factor up; with none left they go too.
        if ((await tx.passkeys.count(claims.sub)) === 0) await tx.recoveryCodes.removeAll(claims.sub);
        await tx.publish([event(SUBJECTS.mfaRemoved, factorEvent(claims.sub, 'totp'))]);
      });
    },

    async newRecoveryCodes(claims) {
      await access.factorChange(claims);
      const st = await stores.mfaStatus.get(claims.sub);
      if (!st.totp && st.passkeys === 0) throw AppError.conflict('Enrol a second factor before making recovery codes.');
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await uow.run(async (tx) => {
        await tx.recoveryCodes.replace(
          claims.sub,
          codes.map((c) => recoveryDigest(deps.recoveryKey, claims.sub, c)),
        );
        await tx.publish([event(SUBJECTS.mfaEnrolled, factorEvent(claims.sub, 'recovery_codes', codes.length))]);
      });
      return codes;
    },

    async passkeyOptions(claims) {
      await access.factorChange(claims);
      return deps.passkeys.registrationOptions(claims.sub);
    },

    async registerPasskey(claims, name, response) {
      await access.factorChange(claims);
      return deps.passkeys.register(claims.sub, name, response);
    },

    async listPasskeys(claims) {
      await access.firstParty(claims);
      return deps.passkeys.list(claims.sub);
    },

    async renamePasskey(claims, id, name) {
      await access.firstParty(claims);
      return deps.passkeys.rename(claims.sub, id, name);
    },

    async removePasskey(claims, id) {
      await access.factorChange(claims);
      return deps.passkeys.remove(claims.sub, id);
    },
  };
}

/**
 * An account's second factors seen from outside the sign-in: what it has (status), and an
 * administrator's reset of all of them. Signing in with them is the flow's (signin/flow.ts, a
 * strategy per factor in signin/strategies/); the account's own management is my-factors.ts.
 */
import { SUBJECTS } from '@iam/contracts';
import { event } from '@iam/platform';
import type { IdentityStores, UnitOfWork } from '../domain/ports';

export type { TotpEnrolment } from './totp-secrets';

export interface MfaStatus {
  readonly totp: boolean;
  readonly passkeys: number;
  readonly recoveryCodesLeft: number;
}

export interface SecondFactorUseCases {
  status(userId: string): Promise<MfaStatus>;
  /** An administrator's reset: every factor of the user removed, with the reason recorded. */
  reset(userId: string, reason: string): Promise<void>;
}

type Stores = Pick<IdentityStores, 'totp' | 'mfaStatus' | 'recoveryCodes' | 'passkeys'>;

export function createSecondFactorUseCases(deps: { uow: UnitOfWork<Stores>; stores: Stores }): SecondFactorUseCases {
  const { uow, stores } = deps;
  return {
    status: (userId) => stores.mfaStatus.get(userId),

    async reset(userId, reason) {
      await uow.run(async (tx) => {
        await tx.totp.remove(userId);
        await tx.recoveryCodes.removeAll(userId);
        await tx.passkeys.removeAll(userId);
        await tx.publish([event(SUBJECTS.mfaReset, { userId, factor: '', failures: 0, reason, recoveryCodesLeft: 0, credential: '', name: '' })]);
      });
    },
  };
}

/**
 * A recovery code as a second factor: one of the account's ten single-use codes (typed in any
 * case, with spaces or dashes or neither; app/recovery-codes.ts). Not an enrolment. amr `otp`
 * (RFC 8176: a one-time password); its use is audited as identity.mfa.recovery_code_used.
 */
import { SUBJECTS } from '@iam/contracts';
import { Type } from '@sinclair/typebox';
import type { IdentityStores } from '../../../domain/ports';
import { presentedDigests } from '../../recovery-codes';
import { defineStrategy } from '../strategy';

export const RecoveryCodeInput = Type.Object({ method: Type.Literal('recovery_code'), code: Type.String({ maxLength: 64 }) });

export function recoveryCodeStrategy(deps: { recoveryKey: Buffer; stores: Pick<IdentityStores, 'recoveryCodes'> }) {
  return defineStrategy({
    method: 'recovery_code',
    input: RecoveryCodeInput,
    audit: 'recovery_code',
    verifiedSubject: SUBJECTS.recoveryCodeUsed,
    second: {
      offered: (status) => status.recoveryCodesLeft > 0,
      async verify(ctx, input) {
        return (await deps.stores.recoveryCodes.use(ctx.userId, presentedDigests(deps.recoveryKey, ctx.userId, input.code))) ? { amr: ['otp'] } : null;
      },
    },
  });
}

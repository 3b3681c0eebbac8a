/**
 * An authenticator app (TOTP, RFC 6238) as a second factor: a right code of the active secret,
 * each time step accepted once. As an enrolment: the pending secret (its options: the secret and
 * its otpauth URI, the same until activated) activated by a first right code; the user is mailed
 * about it (identity.factor.added, committed with the sign-in's step). amr `otp`.
 */
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Directory, IdentityStores } from '../../../domain/ports';
import { factorAddedEvent } from '../../factor-notice';
import type { TotpEnrolment, TotpSecrets } from '../../totp-secrets';
import { defineStrategy } from '../strategy';

const TotpEnrolmentSchema = Type.Object({ secret: Type.String(), otpauthUri: Type.String() });

/** The enrolment's options (`options` of the enrol stage) as the secret and its URI. */
export function totpEnrolmentOf(options: unknown): TotpEnrolment {
  if (!Value.Check(TotpEnrolmentSchema, options)) throw new Error('TOTP enrolment options of an unexpected shape');
  return { secret: options.secret, otpauthUri: options.otpauthUri };
}

export const TotpInput = Type.Object({ method: Type.Literal('totp'), code: Type.String({ maxLength: 64 }) });

export function totpStrategy(deps: { totp: TotpSecrets; stores: Pick<IdentityStores, 'totp'>; directory: Pick<Directory, 'principal'> }) {
  const { totp, stores } = deps;
  return defineStrategy({
    method: 'totp',
    input: TotpInput,
    audit: 'totp',
    second: {
      offered: (status) => status.totp,
      async verify(ctx, input) {
        const step = await totp.step(ctx.userId, input.code, true);
        return step !== null && (await stores.totp.useStep(ctx.userId, step)) ? { amr: ['otp'] } : null;
      },
    },
    enrol: {
      listed: true,
      options: (ctx) => totp.pendingAgain(ctx.userId),
      async verify(ctx, input) {
        // The address is asked for before anything is activated (the mail names the account).
        const owner = await deps.directory.principal(ctx.userId);
        const step = await totp.step(ctx.userId, input.code, false);
        if (step === null || !(await stores.totp.activate(ctx.userId, step))) return null;
        return { amr: ['otp'], events: owner ? [factorAddedEvent(owner, 'totp', '')] : [] };
      },
    },
  });
}

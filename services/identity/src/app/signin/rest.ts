/**
 * The REST sign-in (`/api/v1/auth/login`, `/auth/mfa`, `/auth/passkeys/sign-in`): it only drives
 * the flow, and a sign-in the flow completes starts a REST session (AuthUseCases.startSession:
 * tokens, session row and the first access token's record in one transaction). The hosted pages
 * drive the same flow (api/op/interaction.ts) and hand the result to the provider.
 */
import type { Principal, TokenPair } from '../../domain/model';
import type { AuthUseCases } from '../auth';
import type { MfaChallenge, SignInFlow, StepResult } from './flow';
import { newFlowState } from './state';
import type { FactorInput } from './strategy';

/** Tokens, or the challenge of the next step (a second factor, its enrolment, or a new password). */
export type RestSignInResult = { tokens: TokenPair; principal: Principal; mfa?: undefined } | { mfa: MfaChallenge; tokens?: undefined; principal?: undefined };

export interface RestSignIn {
  /** A first factor (a password, a passkey alone): tokens, or the mfa challenge to answer. */
  start(input: FactorInput): Promise<RestSignInResult>;
  /** The factor step of an mfa token (UNAUTHENTICATED as SignInFlow.secondFactor): tokens, or the next step's challenge. */
  answer(mfaToken: string, input: FactorInput): Promise<RestSignInResult>;
  /** The new-password step of an mfa token (as SignInFlow.changePassword): tokens. */
  changePassword(mfaToken: string, newPassword: string): Promise<RestSignInResult>;
}

export function createRestSignIn(deps: { flow: Pick<SignInFlow, 'firstFactor' | 'secondFactor' | 'changePassword'>; auth: Pick<AuthUseCases, 'startSession'> }): RestSignIn {
  /** A session only for a flow that says `done`; any other step answers its challenge. */
  const next = async (r: StepResult): Promise<RestSignInResult> => {
    if (r.state.step !== 'done') {
      if (!r.challenge) throw new Error(`sign-in step ${r.state.step} without its challenge`);
      return { mfa: r.challenge };
    }
    return { tokens: await deps.auth.startSession(r.principal, r.emailHash, r.amr), principal: r.principal };
  };
  return {
    start: async (input) => next(await deps.flow.firstFactor(newFlowState(), input)),
    answer: async (mfaToken, input) => next(await deps.flow.secondFactor(mfaToken, input)),
    changePassword: async (mfaToken, newPassword) => next(await deps.flow.changePassword(mfaToken, newPassword)),
  };
}

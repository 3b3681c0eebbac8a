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

/** Tokens, or the challenge of the factor step (a first factor of an account with a second factor). */
export type RestSignInResult = { tokens: TokenPair; principal: Principal; mfa?: undefined } | { mfa: MfaChallenge; tokens?: undefined; principal?: undefined };

export interface RestSignIn {
  /** A first factor (a password, a passkey alone): tokens, or the mfa challenge to answer. */
  start(input: FactorInput): Promise<RestSignInResult>;
  /** The factor step of an mfa token (UNAUTHENTICATED as SignInFlow.secondFactor). */
  answer(mfaToken: string, input: FactorInput): Promise<{ tokens: TokenPair; principal: Principal }>;
}

export function createRestSignIn(deps: { flow: Pick<SignInFlow, 'firstFactor' | 'secondFactor'>; auth: Pick<AuthUseCases, 'startSession'> }): RestSignIn {
  const done = async (r: StepResult) => ({ tokens: await deps.auth.startSession(r.principal, r.emailHash, r.amr), principal: r.principal });
  return {
    async start(input) {
      const r = await deps.flow.firstFactor(newFlowState(), input);
      return r.challenge ? { mfa: r.challenge } : done(r);
    },
    answer: async (mfaToken, input) => done(await deps.flow.secondFactor(mfaToken, input)),
  };
}

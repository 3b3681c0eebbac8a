/**
 * One strategy per factor (issue #37 item 2), as Ory Kratos' `login.Strategy`: a module says
 * which input it takes (a TypeBox schema), what options it offers, how it verifies, and the amr
 * (RFC 8176) a success yields. The flow (flow.ts) owns what every factor shares: the lockout
 * accounting, the audit events, the constant-shape failure and the single-use mfa token. A new
 * factor (an upstream identity provider, a legacy password hash) is one module and its test,
 * registered in the composition root (`createStrategyRegistry([...])`): nothing in the flow changes.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { SUBJECTS } from '@iam/contracts';
import type { ErrorReason, NewEvent } from '@iam/platform';
import type { Principal } from '../../domain/model';
import type { MfaStatus } from '../second-factor';

/** The event of a verified second factor. */
export type VerifiedSubject = typeof SUBJECTS.mfaVerified | typeof SUBJECTS.recoveryCodeUsed;

/** A factor's answer as a sign-in receives it: `method` names the strategy, the rest is the strategy's. */
export interface FactorInput {
  readonly method: string;
  readonly [field: string]: unknown;
}

/** Whom a first-factor attempt counts against (the lockout of that email). */
export interface AttemptSubject {
  /** The lockout key (SHA-256 of the normalised email); null when the attempt names no account. */
  readonly key: Buffer | null;
  /** The account, when known before the check (a passkey's owner). */
  readonly principal: Principal | null;
}

/** What a first factor's check is given: whom it counts against, and whether to evaluate (false: the email is locked, same cost). */
export interface FirstContext extends AttemptSubject {
  readonly evaluate: boolean;
}

/** A first factor's outcome: who signed in, or the failure (nothing else is said to the caller). */
export type FirstFactorOutcome =
  | { readonly principal: Principal; readonly amr: readonly string[]; readonly key: Buffer; /** The account must choose a new password (the password strategy knows). */ readonly passwordChangeRequired?: boolean }
  | { readonly principal: null; readonly accountExists: boolean; readonly accountId?: string | undefined };

/** A second factor's (or an enrolment's) context: the account and the mfa token's row. */
export interface ChallengeContext {
  readonly userId: string;
  readonly challengeId: string;
}

/** A verified second factor (or a completed enrolment). */
export interface FactorVerified {
  readonly amr: readonly string[];
  /** Events committed with the step (an authenticator app's enrolment mails the user). */
  readonly events?: readonly NewEvent[];
  /** Its enrolment published its own event (a passkey's registration). */
  readonly enrolmentPublished?: boolean;
}

interface Stage<I, C, R> {
  /** What the page or the client needs before it can answer (WebAuthn options, a pending TOTP secret). */
  options?(ctx: C): Promise<unknown>;
  /** Null, or a failure outcome, when the factor is wrong: the flow counts it and answers the one failure. */
  verify(ctx: C, input: I): Promise<R>;
}

export interface StrategySpec<S extends TSchema> {
  /** The registry name, and the method the mfa challenge lists (`totp`, `webauthn`, `recovery_code`). */
  readonly method: string;
  /** The input it takes, checked by the flow before `verify` sees it. */
  readonly input: S;
  /** The `factor` of its audit events. */
  readonly audit: string;
  /** The event of a verified second factor (default identity.mfa.verified). */
  readonly verifiedSubject?: VerifiedSubject;
  /** As a first factor: the constant-shape refusal of any failure (message and reason). */
  readonly first?: Stage<Static<S>, FirstContext, FirstFactorOutcome> & {
    readonly refusal: { readonly message: string; readonly reason: ErrorReason };
    /** Whom the attempt counts against, before anything is verified. */
    subject(input: Static<S>): Promise<AttemptSubject>;
    /** Options with no account known yet (a passkey's sign-in options, the same for everyone). */
    anonymousOptions?(): Promise<unknown>;
  };
  /** As a second factor of an account that has it. */
  readonly second?: Stage<Static<S>, ChallengeContext, FactorVerified | null> & {
    /** Whether the account can answer with it. */
    offered(status: MfaStatus): boolean;
  };
  /** As the enrolment of an account that must have a second factor and has none. */
  readonly enrol?: Stage<Static<S>, ChallengeContext, FactorVerified | null> & {
    /** Listed in the challenge's methods (a passkey's enrolment is offered by the page's own button). */
    readonly listed: boolean;
  };
}

/** A strategy with its input checked: what the registry holds. */
export interface FactorStrategy {
  readonly method: string;
  readonly audit: string;
  readonly verifiedSubject: VerifiedSubject;
  readonly first?: {
    readonly refusal: { readonly message: string; readonly reason: ErrorReason };
    subject(input: FactorInput): Promise<AttemptSubject | null>;
    verify(ctx: FirstContext, input: FactorInput): Promise<FirstFactorOutcome>;
    anonymousOptions?(): Promise<unknown>;
  };
  readonly second?: { offered(status: MfaStatus): boolean; options?(ctx: ChallengeContext): Promise<unknown>; verify(ctx: ChallengeContext, input: FactorInput): Promise<FactorVerified | null> };
  readonly enrol?: { readonly listed: boolean; options?(ctx: ChallengeContext): Promise<unknown>; verify(ctx: ChallengeContext, input: FactorInput): Promise<FactorVerified | null> };
}

/**
 * A strategy whose stages see only input its schema accepts: input of another shape is a wrong
 * factor (first factor: a null subject; second: null), never an exception.
 */
export function defineStrategy<S extends TSchema>(spec: StrategySpec<S>): FactorStrategy {
  const ok = (input: FactorInput): input is FactorInput & Static<S> => Value.Check(spec.input, input);
  const { first, second, enrol } = spec;
  return {
    method: spec.method,
    audit: spec.audit,
    verifiedSubject: spec.verifiedSubject ?? 'identity.mfa.verified',
    ...(first
      ? {
          first: {
            refusal: first.refusal,
            subject: async (input) => (ok(input) ? first.subject(input) : null),
            verify: async (ctx, input) => (ok(input) ? first.verify(ctx, input) : { principal: null, accountExists: false }),
            ...(first.anonymousOptions ? { anonymousOptions: () => first.anonymousOptions!() } : {}),
          },
        }
      : {}),
    ...(second
      ? {
          second: {
            offered: (status) => second.offered(status),
            ...(second.options ? { options: (ctx: ChallengeContext) => second.options!(ctx) } : {}),
            verify: async (ctx, input) => (ok(input) ? second.verify(ctx, input) : null),
          },
        }
      : {}),
    ...(enrol
      ? {
          enrol: {
            listed: enrol.listed,
            ...(enrol.options ? { options: (ctx: ChallengeContext) => enrol.options!(ctx) } : {}),
            verify: async (ctx, input) => (ok(input) ? enrol.verify(ctx, input) : null),
          },
        }
      : {}),
  };
}

/** The strategies of this deployment, by method, in the order the challenge lists them. */
export interface StrategyRegistry {
  get(method: string): FactorStrategy | undefined;
  all(): readonly FactorStrategy[];
}

export function createStrategyRegistry(strategies: readonly FactorStrategy[]): StrategyRegistry {
  const byMethod = new Map<string, FactorStrategy>();
  for (const s of strategies) {
    if (byMethod.has(s.method)) throw new Error(`two sign-in strategies named ${s.method}`);
    byMethod.set(s.method, s);
  }
  return { get: (m) => byMethod.get(m), all: () => [...byMethod.values()] };
}

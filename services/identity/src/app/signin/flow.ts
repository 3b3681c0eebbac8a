/**
 * The sign-in flow (issue #37 item 1): one object that drives a sign-in through its steps
 * (identify and first factor, second factor or enrolment, a new password when the account must
 * choose one, done), for the REST login and the hosted
 * pages alike. Each factor is a strategy (strategy.ts, strategies/*); the flow owns what they
 * share: the lockout accounting, the audit events, the constant-shape failures (lockout.ts), the
 * single-use mfa token that stands between a first factor and the second, and the one policy
 * (policy.ts) that says what comes next. What "done" writes is the caller's: REST tokens and
 * their session, or the provider's `interactionFinished` (app/sessions.ts writes both sessions).
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, type Logger, event, randomToken, requestContext, sha256, withRequestContext } from '@iam/platform';
import type { Principal } from '../../domain/model';
import type { Directory, IdentityStores, MfaChallengeRecord, MfaPurpose, UnitOfWork } from '../../domain/ports';
import { type Attempts, type LockoutSettings, createAttempts } from './lockout';
import type { OrganizationGrants } from '../organization-tokens';
import { admit, asOrganizationRef } from './organization-policy';
import { nextStep } from './policy';
import { type FlowState, amrOf, newFlowState, readFlowState } from './state';
import type { FactorInput, FactorStrategy, StrategyRegistry } from './strategy';

export const MFA_TOKEN_SECONDS = 300;

/** The refusal of an unknown, used or expired mfa token (the hosted pages start the sign-in again on it). */
export const MFA_TOKEN_INVALID = 'The mfa token is invalid, used or expired.';
const MFA_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const ANSWER_WITH_IT = 'This account has a second factor already: answer with it.';
const NO_SUCH_FACTOR = 'This account has no passkey: answer with another factor.';
const NEW_PASSWORD_NEXT = 'This sign-in needs a new password now: answer with newPassword.';
const FACTOR_NEXT = 'This sign-in needs a factor, not a new password.';

export const mfaTokenInvalid = (): AppError => new AppError('UNAUTHENTICATED', MFA_TOKEN_INVALID, { reason: 'identity.mfa_token_invalid' });

/** The factor step a first factor leads to: its single-use token and what the account can answer with. */
export interface MfaChallenge {
  readonly mfaToken: string;
  readonly methods: readonly string[];
  readonly enrolmentRequired: boolean;
  /** The factors are done; the account must choose a new password (the token takes only that). */
  readonly passwordChangeRequired: boolean;
  readonly expiresIn: number;
}

/** A step's result: the state after it, and who signed in (once the state is `done`, how: amr). */
export interface StepResult {
  readonly state: FlowState;
  readonly principal: Principal;
  /** The lockout key of the account's email (cleared when the sign-in completes). */
  readonly emailHash: Buffer;
  readonly amr: string[];
  /** When the state's step is `second_factor`, `enrol` or `password_change`. */
  readonly challenge?: MfaChallenge;
}

export interface SignInFlowSettings extends LockoutSettings {
  /** MFA_REQUIRED_ROLES. */
  readonly requiredRoles: readonly string[];
}

type Stores = Pick<IdentityStores, 'lockouts' | 'mfaChallenges' | 'mfaStatus' | 'recoveryCodes'>;

export interface SignInFlow {
  /**
   * The first factor (a password, a passkey alone, any strategy with a first stage): UNAUTHENTICATED
   * with the strategy's one refusal for anything wrong (counted toward the lockout). The state
   * after it is `done`, or `second_factor`/`enrol` with the challenge to answer (nothing signed in yet).
   */
  firstFactor(state: FlowState, input: FactorInput): Promise<StepResult>;
  /**
   * The second factor (or the enrolment) of an mfa token, which it uses up. UNAUTHENTICATED
   * (identity.mfa_token_invalid) for an unknown, used or expired token; (identity.invalid_factor)
   * for a locked account or a wrong or replayed factor (counted toward the lockout).
   */
  secondFactor(mfaToken: string, input: FactorInput): Promise<StepResult>;
  /**
   * The new password of a `password_change` step's mfa token, which it uses up (the directory
   * checks the policy and clears the account's mark). VALIDATION (field newPassword) leaves the
   * token usable; UNAUTHENTICATED (identity.mfa_token_invalid) for an unknown, used or expired
   * token; CONFLICT (identity.method_unavailable) for a token of a factor step.
   */
  changePassword(mfaToken: string, newPassword: string): Promise<StepResult>;
  /**
   * What a strategy offers before it is answered: its anonymous first-factor options (a passkey's
   * sign-in), or with an mfa token its second factor's or enrolment's options (CONFLICT,
   * identity.method_unavailable, when the token is of the other kind or the account cannot answer so).
   */
  options(method: string, at?: { mfaToken: string; stage: 'second' | 'enrol' }): Promise<unknown>;
  /** A first factor checked again, not a sign-in (a change to the account): who, with the reservation given back. */
  reauthenticate(input: FactorInput): Promise<Principal>;
}

export function createSignInFlow(deps: {
  settings: SignInFlowSettings;
  uow: UnitOfWork<Stores>;
  stores: Stores;
  strategies: StrategyRegistry;
  /** The principal of a completed sign-in (the cache in production). */
  principals: Pick<Directory, 'principal'>;
  /** The directory's password change of an account that must choose a new one. */
  passwords: Pick<Directory, 'changeRequiredPassword'>;
  /** Membership, for a sign-in whose request names an organization (organization-policy.ts); absent: such a sign-in is refused. */
  organizations?: Pick<OrganizationGrants, 'grant'>;
  logger: Logger;
}): SignInFlow {
  const { settings: s, uow, stores, strategies } = deps;
  const attempts: Attempts = createAttempts({ settings: s, stores, uow, logger: deps.logger });

  const strategyOf = (method: string): FactorStrategy | undefined => strategies.get(method);

  async function findChallenge(mfaToken: string): Promise<MfaChallengeRecord> {
    if (!MFA_TOKEN_RE.test(mfaToken)) throw mfaTokenInvalid();
    const c = await stores.mfaChallenges.find(sha256(mfaToken));
    if (!c) throw mfaTokenInvalid();
    return c;
  }

  /** The first factor's check with its lockout: who, or the strategy's one refusal. */
  async function verifyFirst(input: FactorInput): Promise<{ principal: Principal; key: Buffer; amr: readonly string[]; method: string; passwordChangeRequired: boolean }> {
    const strategy = strategyOf(input.method);
    const first = strategy?.first;
    if (!strategy || !first) throw new AppError('UNAUTHENTICATED', 'This sign-in method is not available.', { reason: 'identity.invalid_credentials' });
    const subject = (await first.subject(input)) ?? { key: null, principal: null };
    const slot = await attempts.reserve(subject.key);
    let outcome;
    try {
      outcome = await first.verify({ ...subject, evaluate: slot.allowed }, input);
    } catch (err) {
      if (slot.allowed) await attempts.release(subject.key);
      throw err;
    }
    if (!outcome.principal || !slot.allowed) {
      const accountExists = outcome.principal ? true : outcome.accountExists;
      const accountId = outcome.principal ? outcome.principal.userId : (outcome.accountId ?? subject.principal?.userId ?? '');
      return attempts.refuseFirst({ key: subject.key, slot, accountExists, accountId, refusal: first.refusal });
    }
    return { principal: outcome.principal, key: outcome.key, amr: outcome.amr, method: strategy.method, passwordChangeRequired: outcome.passwordChangeRequired === true };
  }

  /** The methods an account answers with (in the registry's order), and whether it must enrol one instead. */
  async function factorsOf(userId: string): Promise<{ enrolled: boolean; methods: string[] }> {
    const status = await stores.mfaStatus.get(userId);
    const enrolled = status.totp || status.passkeys > 0;
    const all = strategies.all();
    const methods = enrolled ? all.filter((x) => x.second?.offered(status)).map((x) => x.method) : all.filter((x) => x.enrol?.listed).map((x) => x.method);
    return { enrolled, methods };
  }

  /** The single-use token of the factor (or new-password) step; its row keeps the sign-in's state (without the token). */
  async function issueChallenge(state: FlowState, principal: Principal, emailHash: Buffer, purpose: MfaPurpose, methods: string[]): Promise<MfaChallenge> {
    const mfaToken = randomToken(32);
    await stores.mfaChallenges.create({
      id: randomUUID(),
      userId: principal.userId,
      emailHash,
      tokenHash: sha256(mfaToken),
      purpose,
      expiresAt: new Date(Date.now() + MFA_TOKEN_SECONDS * 1000),
      flow: state,
    });
    return { mfaToken, methods, enrolmentRequired: purpose === 'enrol', passwordChangeRequired: purpose === 'password', expiresIn: MFA_TOKEN_SECONDS };
  }

  /** The step the policy names after `state`'s factors: `done`, or its challenge issued and kept in the state. */
  async function ask(state: FlowState, next: ReturnType<typeof nextStep>, principal: Principal, emailHash: Buffer, methods: string[], amr: string[]): Promise<StepResult> {
    const { challenge: _previous, ...base } = state;
    if (next === 'done') return { state: { ...base, step: 'done' }, principal, emailHash, amr };
    const purpose: MfaPurpose = next === 'password_change' ? 'password' : next === 'enrol' ? 'enrol' : 'verify';
    const challenge = await issueChallenge({ ...base, step: next }, principal, emailHash, purpose, purpose === 'password' ? [] : methods);
    return { state: { ...base, step: next, challenge: { mfaToken: challenge.mfaToken, methods: [...challenge.methods] } }, principal, emailHash, amr, challenge };
  }

  /** The organization gate of organization-policy.ts: before a second factor is asked, and again before `done`. */
  async function admitted(state: FlowState, userId: string): Promise<void> {
    const organization = asOrganizationRef(state.organization);
    if (!organization) return;
    await admit(deps.organizations ?? { grant: async () => null }, userId, organization);
  }

  return {
    async firstFactor(state, input) {
      const v = await verifyFirst(input);
      try {
        await admitted(state, v.principal.userId);
      } catch (err) {
        // The factor was right: its reservation is given back, the count kept (no sign-in completed).
        await attempts.release(v.key);
        throw err;
      }
      const factors = [...state.factors, { method: v.method, amr: [...v.amr] }];
      const amr = amrOf(factors);
      const account = amr.includes('mfa') ? null : await factorsOf(v.principal.userId);
      const change = v.passwordChangeRequired;
      const next = nextStep({ roles: v.principal.roles, requiredRoles: s.requiredRoles, acrValues: state.acrValues, amr, enrolled: account?.enrolled, passwordChangeRequired: change });
      const base: FlowState = { ...state, userId: v.principal.userId, factors, ...(change ? { passwordChangeRequired: true } : {}) };
      const r = await ask(base, next, v.principal, v.key, account?.methods ?? [], amr);
      // The first factor was right: its reservation is given back, but the count is not cleared
      // (that is for a complete sign-in), so wrong second factors add up to the lock.
      if (r.challenge) await attempts.release(v.key);
      return r;
    },

    async secondFactor(mfaToken, input) {
      const c = await findChallenge(mfaToken);
      if (c.purpose === 'password') throw new AppError('CONFLICT', NEW_PASSWORD_NEXT, { reason: 'identity.method_unavailable' });
      // A row made before the flow's state was kept (none): its first factor was the password. A
      // state its schema refuses is no sign-in to complete.
      const state = c.flow == null ? { ...newFlowState(), userId: c.userId, factors: [{ method: 'password', amr: ['pwd'] }] } : readFlowState(c.flow);
      if (!state || state.userId !== c.userId) throw mfaTokenInvalid();
      const strategy = strategyOf(input.method);
      const stage = c.purpose === 'enrol' ? strategy?.enrol : strategy?.second;
      const audit = strategy?.audit ?? input.method.slice(0, 32);
      const ctx = { userId: c.userId, challengeId: c.id };
      const slot = await attempts.reserve(c.emailHash);
      let verified = null;
      if (slot.allowed && stage) {
        try {
          verified = await stage.verify(ctx, input);
        } catch (err) {
          await attempts.release(c.emailHash);
          throw err;
        }
      }
      if (!verified || !slot.allowed || !strategy) return attempts.refuseSecond({ userId: c.userId, slot, audit });
      const left = await stores.recoveryCodes.countLeft(c.userId);
      const consumed = await uow.run(async (tx) => {
        if (!(await tx.mfaChallenges.consume(c.id))) return false;
        const e = { userId: c.userId, factor: audit, failures: 0, reason: '', recoveryCodesLeft: left, credential: '', name: '' };
        await tx.publish([
          ...(c.purpose === 'enrol' && !verified.enrolmentPublished ? [event(SUBJECTS.mfaEnrolled, e)] : []),
          ...(verified.events ?? []),
          event(strategy.verifiedSubject, e),
        ]);
        return true;
      });
      if (!consumed) throw mfaTokenInvalid();
      const principal = await deps.principals.principal(c.userId);
      if (!principal) throw mfaTokenInvalid();
      await admitted(state, c.userId);
      const factors = [...state.factors, { method: strategy.method, amr: [...verified.amr] }];
      const amr = amrOf(factors);
      // The policy again: with the factors done, an account that must choose a new password does it now.
      const next = nextStep({ roles: principal.roles, requiredRoles: s.requiredRoles, acrValues: state.acrValues, amr, enrolled: true, passwordChangeRequired: state.passwordChangeRequired });
      return ask({ ...state, factors }, next, principal, c.emailHash, [], amr);
    },

    async changePassword(mfaToken, newPassword) {
      const c = await findChallenge(mfaToken);
      if (c.purpose !== 'password') throw new AppError('CONFLICT', FACTOR_NEXT, { reason: 'identity.method_unavailable' });
      const state = readFlowState(c.flow);
      if (!state || state.userId !== c.userId || state.step !== 'password_change') throw mfaTokenInvalid();
      // The organization gate again before `done` (and before anything changes).
      await admitted(state, c.userId);
      // The user is the actor of the change (the directory's user.updated and its audit entry name them).
      try {
        await withRequestContext({ ...requestContext(), actor: c.userId }, () => deps.passwords.changeRequiredPassword(c.userId, newPassword));
      } catch (err) {
        // Changed already (another answer of this step won): this token is spent.
        if (err instanceof AppError && err.code === 'CONFLICT') throw mfaTokenInvalid();
        throw err;
      }
      if (!(await stores.mfaChallenges.consume(c.id))) throw mfaTokenInvalid();
      const principal = await deps.principals.principal(c.userId);
      if (!principal) throw mfaTokenInvalid();
      const { challenge: _spent, passwordChangeRequired: _changed, ...rest } = state;
      return { state: { ...rest, step: 'done' }, principal, emailHash: c.emailHash, amr: amrOf(state.factors) };
    },

    async options(method, at) {
      const strategy = strategyOf(method);
      if (at === undefined) {
        const first = strategy?.first;
        if (!first?.anonymousOptions) throw new AppError('CONFLICT', 'This sign-in method offers no options.', { reason: 'identity.method_unavailable' });
        return first.anonymousOptions();
      }
      const c = await findChallenge(at.mfaToken);
      const ctx = { userId: c.userId, challengeId: c.id };
      if (at.stage === 'enrol') {
        const enrol = strategy?.enrol;
        if (c.purpose !== 'enrol' || !enrol?.options) throw new AppError('CONFLICT', ANSWER_WITH_IT, { reason: 'identity.method_unavailable' });
        return enrol.options(ctx);
      }
      const second = strategy?.second;
      if (c.purpose !== 'verify' || !second?.options || !second.offered(await stores.mfaStatus.get(c.userId))) {
        throw new AppError('CONFLICT', NO_SUCH_FACTOR, { reason: 'identity.method_unavailable' });
      }
      return second.options(ctx);
    },

    async reauthenticate(input) {
      const v = await verifyFirst(input);
      // A change to the account is not a sign-in: the reservation is given back, the count kept.
      await attempts.release(v.key);
      return v.principal;
    },
  };
}

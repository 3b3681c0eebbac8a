/**
 * The one MFA policy (DESIGN §5, issue #37 item 3): what a sign-in needs next, from the account's
 * roles (MFA_REQUIRED_ROLES), the client's acr_values, whether the account has a second factor
 * enrolled, and the factors already verified. The REST login, the hosted pages, a refresh, the
 * device flow and the provider's `findAccount` all ask it: a session whose sign-in had no second
 * factor, for an account that now needs one, is not `done`.
 */

/** The acr of a sign-in with a password alone, and of one with a second factor (or a passkey). */
export const ACR_PWD = 'urn:iam:acr:pwd';
export const ACR_MFA = 'urn:iam:acr:mfa';

export interface PolicyInput {
  /** The account's roles now. */
  readonly roles: readonly string[];
  /** MFA_REQUIRED_ROLES. */
  readonly requiredRoles: readonly string[];
  /** The client's acr_values (space-separated), when it asked. */
  readonly acrValues?: unknown;
  /** The amr of what was verified (a session's, a token's). */
  readonly amr: readonly string[];
  /**
   * Whether the account has a second factor to answer with; unknown (a session already open, a
   * token) counts as none asked for by enrolment alone: only roles and acr_values decide then.
   */
  readonly enrolled?: boolean | undefined;
  /** The account must choose a new password (imported so): after its factors, before `done`. */
  readonly passwordChangeRequired?: boolean | undefined;
}

/** What comes next: nothing (`done`), a second factor, the enrolment of one, or a new password. */
export type PolicyStep = 'done' | 'second_factor' | 'enrol' | 'password_change';

/** Whether acr_values ask for a second factor (step-up). */
export function wantsMfa(acrValues: unknown): boolean {
  return typeof acrValues === 'string' && acrValues.split(' ').includes(ACR_MFA);
}

export function nextStep(p: PolicyInput): PolicyStep {
  const byRole = p.roles.some((r) => p.requiredRoles.includes(r));
  const needed = !p.amr.includes('mfa') && (p.enrolled === true || byRole || wantsMfa(p.acrValues));
  if (needed) return p.enrolled === false ? 'enrol' : 'second_factor';
  // The factors first (who it is), then the new password: a password change never stands in for a factor.
  return p.passwordChangeRequired === true ? 'password_change' : 'done';
}

/** The acr of a sign-in with this amr. */
export function acrOf(amr: readonly string[]): string {
  return amr.includes('mfa') ? ACR_MFA : ACR_PWD;
}

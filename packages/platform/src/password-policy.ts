/**
 * The password policy (spec §5.7): at least 12 characters with upper- and lower-case letters, a
 * digit and a special character. One definition, as data, for every place that needs it: the
 * directory enforces it (`passwordProblems`), the gateway documents it, and the console's
 * generated limits (console/scripts/gen-api.mjs → limits.generated.ts) show it as the user types
 * on the hosted reset page, so the rules cannot drift apart.
 */
export interface PasswordRule {
  readonly id: string;
  /** What the rule asks, as a checklist item ("An uppercase letter"). */
  readonly label: string;
  /** The refusal when the rule is not met ("must contain an uppercase letter"). */
  readonly message: string;
  /** A regular expression's source, with the `u` flag: the password must match it (`forbidden`: must not). */
  readonly pattern: string;
  readonly forbidden?: boolean;
}

export interface PasswordPolicy {
  /** In code points. */
  readonly minLength: number;
  /** In code points; longer passwords are refused before hashing. */
  readonly maxLength: number;
  readonly rules: readonly PasswordRule[];
}

export const PASSWORD_POLICY: PasswordPolicy = Object.freeze({
  minLength: 12,
  maxLength: 128,
  rules: Object.freeze([
    { id: 'uppercase', label: 'An uppercase letter', message: 'must contain an uppercase letter', pattern: '\\p{Lu}' },
    { id: 'lowercase', label: 'A lowercase letter', message: 'must contain a lowercase letter', pattern: '\\p{Ll}' },
    { id: 'digit', label: 'A digit', message: 'must contain a digit', pattern: '\\p{Nd}' },
    { id: 'special', label: 'A special character (not a letter, digit or space)', message: 'must contain a special character', pattern: '[^\\p{L}\\p{Nd}\\s]' },
    { id: 'control', label: 'No control characters', message: 'must not contain control characters', pattern: '[\\u0000-\\u001f\\u007f]', forbidden: true },
  ]),
});

/** What a password lacks under the policy: one message per unmet rule (empty: it passes). */
export function passwordProblems(password: string, policy: PasswordPolicy = PASSWORD_POLICY): string[] {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < policy.minLength) problems.push(`must be at least ${policy.minLength} characters`);
  if (length > policy.maxLength) problems.push(`must be at most ${policy.maxLength} characters`);
  for (const rule of policy.rules) {
    if (new RegExp(rule.pattern, 'u').test(password) === Boolean(rule.forbidden)) problems.push(rule.message);
  }
  return problems;
}

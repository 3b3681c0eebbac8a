/**
 * The password policy as hints: each requirement and whether a password meets it, in the policy's
 * order. The policy itself is the platform's PASSWORD_POLICY (the directory enforces it; the
 * console gets it as limits.generated.ts), passed in.
 */
export interface PasswordPolicy {
  readonly minLength: number;
  readonly maxLength: number;
  readonly rules: ReadonlyArray<{ readonly id: string; readonly label: string; readonly pattern: string; readonly forbidden?: boolean }>;
}

export interface PolicyCheck {
  readonly id: string;
  readonly label: string;
  readonly met: boolean;
}

export function policyChecks(policy: PasswordPolicy, password: string, lengthLabel: (min: number) => string): PolicyCheck[] {
  const length = [...password].length;
  return [
    { id: 'length', label: lengthLabel(policy.minLength), met: length >= policy.minLength && length <= policy.maxLength },
    ...policy.rules.map((r) => ({ id: r.id, label: r.label, met: new RegExp(r.pattern, 'u').test(password) !== (r.forbidden === true) })),
  ];
}

/** The password policy as the API enforces it (limits.generated.ts, from the platform's one definition). */
import { passwordPolicy } from '../api/limits.generated';

export interface PolicyCheck {
  readonly id: string;
  readonly label: string;
  readonly met: boolean;
}

/** Each requirement of the policy and whether `password` meets it, in the policy's order. */
export function policyChecks(password: string): PolicyCheck[] {
  const length = [...password].length;
  return [
    { id: 'length', label: `At least ${passwordPolicy.minLength} characters`, met: length >= passwordPolicy.minLength && length <= passwordPolicy.maxLength },
    ...passwordPolicy.rules.map((r) => ({
      id: r.id,
      label: r.label,
      met: new RegExp(r.pattern, 'u').test(password) !== ('forbidden' in r && r.forbidden),
    })),
  ];
}

export const passwordMaxLength = passwordPolicy.maxLength;

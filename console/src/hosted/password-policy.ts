/** The password policy as the API enforces it (limits.generated.ts, from the platform's one definition), as the hosted pages' hints. */
import { type PolicyCheck, messages, policyChecks as checksOf } from '@iam/hosted-pages';
import { passwordPolicy } from '../api/limits.generated';

export type { PolicyCheck };

/** Each requirement of the policy and whether `password` meets it, in the policy's order. */
export const policyChecks = (password: string): PolicyCheck[] => checksOf(passwordPolicy, password, messages.resetPassword.atLeast);

export const passwordMaxLength = passwordPolicy.maxLength;

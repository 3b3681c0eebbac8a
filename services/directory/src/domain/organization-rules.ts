/**
 * Input rules of organizations. A slug names the organization in scopes (`organization:<slug>`)
 * and URLs, and people match it by eye: lower case, 2..63 characters, letters and digits in runs
 * joined by single hyphens, a clean identifier (UTS #39: identifierProblem, so no invisible or
 * control characters, no Latin mixed with Cyrillic or Greek) and not a lookalike of a live slug
 * (the store's 409 on the lookalike key).
 */
import { Violations, checkIdentifierName, checkName, identifierProblem } from './rules';

export const SLUG_MAX_LENGTH = 63;
const SLUG_RE = /^[\p{Ll}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lo}\p{Nd}]+)*$/u;

export function checkSlug(v: Violations, field: string, value: string): string {
  const problem = identifierProblem(value);
  const s = value.trim();
  if (problem) v.add(field, problem);
  else if (s.length < 2 || s.length > SLUG_MAX_LENGTH) v.add(field, `must be 2 to ${SLUG_MAX_LENGTH} characters`);
  else if (!SLUG_RE.test(s)) v.add(field, 'must be lower-case letters and digits, in runs joined by single hyphens');
  return s;
}

export interface OrganizationInput {
  name?: string;
  slug?: string;
  jitEnabled?: boolean;
  jitRoles?: readonly string[];
}

export function checkOrganization(input: OrganizationInput, create: boolean): OrganizationInput {
  const v = new Violations();
  const out: OrganizationInput = { jitEnabled: input.jitEnabled };
  if (input.name !== undefined || create) out.name = checkName(v, 'name', input.name ?? '');
  if (input.slug !== undefined || create) out.slug = checkSlug(v, 'slug', input.slug ?? '');
  if (input.jitRoles !== undefined) out.jitRoles = checkRoleNames(v, 'jitRoles', input.jitRoles);
  v.throwIfAny();
  return out;
}

/** Organization role names in a request: at most 50, each a clean identifier, no duplicates (case aside). */
export function checkRoleNames(v: Violations, field: string, names: readonly string[]): string[] {
  if (names.length > 50) {
    v.add(field, 'must hold at most 50 roles');
    return [];
  }
  const out = names.map((n, i) => checkIdentifierName(v, `${field}[${i}]`, n));
  if (new Set(out.map((n) => n.toLowerCase())).size !== out.length) v.add(field, 'must not repeat a role');
  return out;
}

/**
 * The sign-in policy for an authorization request that names an organization (issue #41,
 * keycloak#33308, logto#6639): `scope=organization:<slug>`, or `scope=organization` with an
 * `organization_id` parameter (an id, or a slug). A non-member is refused before anything of that
 * client is issued: the hosted sign-in ends with `access_denied` instead of a session (flow.ts
 * asks `admit` once the factors are verified), and a session already open gets no code (the
 * provider's policy check, infra/oidc/provider.ts). The refusal of a non-member and of an unknown
 * organization is the same (NOT_A_MEMBER), so membership cannot be probed.
 *
 * `organization` alone names no organization: the app then gets organization tokens by the
 * organization-token grant (infra/oidc/organization-grant.ts). One organization per request.
 */
import { AppError, isUuid } from '@iam/platform';
import { NOT_A_MEMBER, type OrganizationGrants } from '../organization-tokens';

/** The scope naming one organization by slug (its slug's shape as the directory's), or by id (a UUID: an id, never a slug). */
export const ORGANIZATION_SCOPE_RE = /^organization:([a-z0-9]+(?:-[a-z0-9]+)*)$/;
/** `organization` (with `organization_id`, one organization) and `organizations` (the ID token lists them). */
export const ORGANIZATION_SCOPE = 'organization';
export const ORGANIZATIONS_SCOPE = 'organizations';

/** An organization as a request names it: by id or by slug. */
export type OrganizationRef = { readonly id: string } | { readonly slug: string };

/** The reason of the refusal (the interaction turns it into `access_denied`). */
export const ORGANIZATION_REFUSED = 'identity.organization_refused';

export const organizationRefused = (): AppError => new AppError('FORBIDDEN', NOT_A_MEMBER, { reason: ORGANIZATION_REFUSED });
export const isOrganizationRefusal = (err: unknown): err is AppError => err instanceof AppError && err.reason === ORGANIZATION_REFUSED;

/** `organization_id` as an organization: an id (UUID) or a slug; null for anything else. */
export function organizationRefOf(value: string): OrganizationRef | null {
  const v = value.trim().toLowerCase();
  if (isUuid(v)) return { id: v };
  return v.length <= 63 && ORGANIZATION_SCOPE_RE.test(`organization:${v}`) ? { slug: v } : null;
}

/** The `organization:<slug>` scopes of a space-separated scope. */
export function organizationScopes(scope: unknown): string[] {
  return typeof scope === 'string' ? scope.split(' ').filter((s) => ORGANIZATION_SCOPE_RE.test(s)) : [];
}

/**
 * The organization an authorization request names; null when it names none. VALIDATION when it
 * names more than one, or an `organization_id` that is no id or slug (the same for every caller:
 * nothing about membership).
 */
export function organizationAsked(params: { scope?: unknown; organization_id?: unknown }): OrganizationRef | null {
  const raw = typeof params.organization_id === 'string' && params.organization_id !== '' ? [params.organization_id] : [];
  const all = [...organizationScopes(params.scope).map((s) => ORGANIZATION_SCOPE_RE.exec(s)![1]!), ...raw].map(organizationRefOf);
  if (all.some((r) => r === null)) throw AppError.validation('organization_id names no organization.');
  const distinct = [...new Map(all.map((r) => [JSON.stringify(r), r!])).values()];
  if (distinct.length > 1) throw AppError.validation('An authorization request names one organization at most.');
  return distinct[0] ?? null;
}

/** `organization:<slug or id>` of one scope value, as an organization. */
export function organizationOfScope(scope: string): OrganizationRef | null {
  const m = ORGANIZATION_SCOPE_RE.exec(scope);
  return m ? organizationRefOf(m[1]!) : null;
}

/** Whether a stored ref (the flow's state) is one: `{id}` or `{slug}`. */
export function asOrganizationRef(v: { id?: string | undefined; slug?: string | undefined } | undefined): OrganizationRef | null {
  if (v?.id) return { id: v.id };
  if (v?.slug) return { slug: v.slug };
  return null;
}

/** The gate: resolves for a member of `organization`, throws the refusal for anyone else. */
export async function admit(grants: Pick<OrganizationGrants, 'grant'>, userId: string, organization: OrganizationRef | null): Promise<void> {
  if (!organization) return;
  if (!(await grants.grant(userId, organization))) throw organizationRefused();
}

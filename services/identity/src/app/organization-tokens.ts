/**
 * Organization tokens (issue #41), Logto's pattern: a live refresh token of a user is exchanged
 * for an access token of one organization the user is a member of. The refresh token is not
 * rotated (the exchange reads it; its family's rotation and reuse detection stay the refresh
 * grant's). What the member holds there is read from the directory at every exchange (a user
 * whose verified email is on a verified domain of an organization allowing it joins first), so
 * a removed member or role is gone at the next exchange, and at the gateway once the organization
 * tokens already issued expire: within JWT_EXPIRY (300 s by default). The token carries `org`,
 * an audience of the organization beside the API's, no platform roles, and the permissions of the
 * member's roles there narrowed to the scope asked for, never more. A non-member and an unknown
 * organization get the same answer.
 */
import { AppError, sha256 } from '@iam/platform';
import type { Directory, IdentityStores, TokenService } from '../domain/ports';

export interface OrganizationGrant {
  readonly organizationId: string;
  readonly organizationSlug: string;
  readonly roles: readonly string[];
  readonly permissions: readonly string[];
}

/** The directory's answer (OrganizationAccessService): null for a non-member and an unknown organization alike. */
export interface OrganizationGrants {
  grant(userId: string, organization: { id?: string; slug?: string }): Promise<OrganizationGrant | null>;
  /** The organizations the user is a member of now (the ID token's `organizations`), by slug. */
  organizationsOf(userId: string): Promise<OrganizationGrant[]>;
}

export interface OrganizationToken {
  readonly token: string;
  readonly expiresIn: number;
  readonly organizationId: string;
  readonly organizationSlug: string;
  readonly permissions: readonly string[];
}

/** What a member holds in an organization for one token: the organization and the permissions it carries. */
export interface OrganizationRights {
  readonly organizationId: string;
  readonly organizationSlug: string;
  readonly permissions: readonly string[];
}

/**
 * The one use case of both drivers (REST below, the provider's organization-token grant and its
 * authorization requests in infra/oidc/organization-grant.ts): what `userId` holds in
 * `organization` now, narrowed to `scope` (absent: all it holds there), never more. FORBIDDEN
 * with NOT_A_MEMBER for a non-member and an unknown organization alike.
 */
export async function organizationRights(
  grants: Pick<OrganizationGrants, 'grant'>,
  userId: string,
  organization: { id?: string; slug?: string },
  scope?: readonly string[],
): Promise<OrganizationRights> {
  const grant = await grants.grant(userId, organization);
  if (!grant) throw AppError.forbidden(NOT_A_MEMBER);
  const permissions = scope ? grant.permissions.filter((p) => scope.includes(p)) : [...grant.permissions];
  return { organizationId: grant.organizationId, organizationSlug: grant.organizationSlug, permissions };
}

export interface OrganizationTokenUseCases {
  /** `organization`: its id (REST) or slug (the `organization:<slug>` scope); `scope`: the permissions asked for, absent = all held there. */
  exchange(refreshToken: string, organization: { id?: string; slug?: string }, scope?: readonly string[]): Promise<OrganizationToken>;
}

const REFRESH_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
export const NOT_A_MEMBER = 'The organization does not exist or you are not a member of it.';

export function createOrganizationTokenUseCases(deps: {
  stores: Pick<IdentityStores, 'refreshTokens' | 'subjects'>;
  principals: Pick<Directory, 'principal'>;
  grants: OrganizationGrants;
  tokens: Pick<TokenService, 'issue'>;
  accessExpirySeconds: number;
}): OrganizationTokenUseCases {
  const invalid = () => AppError.unauthenticated('The refresh token is invalid, expired or revoked.');
  return {
    async exchange(refreshToken, organization, scope) {
      if (!REFRESH_TOKEN_RE.test(refreshToken)) throw invalid();
      const token = await deps.stores.refreshTokens.findByHash(sha256(refreshToken));
      // Only the family's live token: a rotated one is never exchanged (its reuse is the refresh grant's to detect).
      if (!token || token.revokedAt || token.rotatedAt || token.expiresAt.getTime() <= Date.now()) throw invalid();
      const [principal, notBefore] = await Promise.all([deps.principals.principal(token.userId), deps.stores.subjects.notBefore(token.userId)]);
      if (!principal) throw invalid();
      const r = await organizationRights(deps.grants, token.userId, organization, scope);
      const issued = await deps.tokens.issue({ ...principal, roles: [], permissions: [...r.permissions] }, { notBefore, org: { id: r.organizationId, slug: r.organizationSlug } });
      return { token: issued.token, expiresIn: deps.accessExpirySeconds, ...r };
    },
  };
}

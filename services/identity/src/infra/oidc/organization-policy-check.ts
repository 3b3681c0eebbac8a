/**
 * The organization gate of app/signin/organization-policy.ts for a session already open (no
 * sign-in page shown): a check of the provider's login prompt. An authorization request naming
 * an organization the session's account is not a member of (or an unknown one: the same answer)
 * ends with `access_denied` before a code or a grant for that client is made. A sign-in just
 * completed was checked by the flow itself; a malformed organization request is invalid_request.
 */
import { AppError } from '@iam/platform';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { NOT_A_MEMBER, type OrganizationGrants } from '../../app/organization-tokens';
import { admit, isOrganizationRefusal, organizationAsked } from '../../app/signin/organization-policy';

export async function organizationPolicy(grants: Pick<OrganizationGrants, 'grant'>) {
  const { errors, interactionPolicy } = await import('oidc-provider');
  return new interactionPolicy.Check('organization_member', 'The organization asked for admits this account', 'access_denied', async (ctx: KoaContextWithOIDC) => {
    let asked;
    try {
      asked = organizationAsked(ctx.oidc.params ?? {});
    } catch (err) {
      if (err instanceof AppError) throw new errors.InvalidRequest(err.message);
      throw err;
    }
    const accountId = ctx.oidc.session?.accountId;
    if (!asked || !accountId || ctx.oidc.result?.login) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    try {
      await admit(grants, accountId, asked);
    } catch (err) {
      if (isOrganizationRefusal(err)) throw new errors.AccessDenied(NOT_A_MEMBER);
      throw err;
    }
    return interactionPolicy.Check.NO_NEED_TO_PROMPT;
  });
}

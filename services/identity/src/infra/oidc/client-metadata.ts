/**
 * A registry client (ClientLookup) as oidc-provider client metadata. The registry keeps only a
 * hash of a confidential client's secret: the metadata carries a random placeholder the provider
 * never compares (provider.ts routes compareClientSecret to ClientLookup.verifySecret).
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClient } from '../../domain/clients';
import { ORGANIZATION_TOKEN_GRANT } from './organization-grant';

/** Never a client's secret: only there because the provider requires one for secret-based authentication. */
const PLACEHOLDER_SECRET = randomBytes(32).toString('base64url');

/**
 * The client's metadata: its ID tokens signed in its `id_token_signed_response_alg` (RS256 unless
 * it asked for another), userinfo as a JWT only when it asked for one, and our own settings as
 * `urn:iam:*` properties (provider.ts `extraClientMetadata`).
 */
export function clientMetadata(c: OAuthClient): Record<string, unknown> {
  const confidential = c.type === 'confidential';
  const code = c.grantTypes.includes('authorization_code');
  return {
    client_id: c.clientId,
    client_name: c.name,
    ...(confidential ? { client_secret: PLACEHOLDER_SECRET, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
    redirect_uris: code ? [...c.redirectUris] : [],
    post_logout_redirect_uris: [...c.postLogoutRedirectUris],
    // A client with refresh tokens may exchange them for organization tokens (organization-grant.ts).
    grant_types: c.grantTypes.includes('refresh_token') ? [...c.grantTypes, ORGANIZATION_TOKEN_GRANT] : [...c.grantTypes],
    response_types: code ? ['code'] : [],
    require_pushed_authorization_requests: c.requirePar,
    dpop_bound_access_tokens: c.dpopBound,
    id_token_signed_response_alg: c.idTokenSignedResponseAlg,
    ...(c.userinfoSignedResponseAlg ? { userinfo_signed_response_alg: c.userinfoSignedResponseAlg } : {}),
    'urn:iam:first_party': c.firstParty,
    'urn:iam:resource_server': c.resourceServer,
    'urn:iam:roles': [...c.roles],
    'urn:iam:api_permissions': [...c.apiPermissions],
  };
}

/**
 * OAuth clients of the OpenID provider (DESIGN §5 "Clients"): the registry the clients API
 * writes and the provider reads. A client with the `client_credentials` grant is a service
 * account: its tokens have `sub` = its client id and the permissions of its `roles`.
 * Only a hash of a confidential client's secret is kept; the secret is shown once.
 */

export type ClientType = 'public' | 'confidential';

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials' | 'urn:ietf:params:oauth:grant-type:device_code';

export const GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'];

export interface OAuthClient {
  /** The OAuth `client_id` (also the resource id of `/api/v1/clients/{id}`). */
  readonly clientId: string;
  readonly name: string;
  readonly type: ClientType;
  /** Exact-match redirect URIs; `http` only on loopback. */
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  readonly grantTypes: readonly GrantType[];
  /** Role names whose permissions a service account's tokens carry (empty for other clients). */
  readonly roles: readonly string[];
  /** PAR required (`require_pushed_authorization_requests`). */
  readonly requirePar: boolean;
  /** Access tokens must be DPoP-bound (`dpop_bound_access_tokens`). */
  readonly dpopBound: boolean;
  /** First-party clients (the console) skip consent. */
  readonly firstParty: boolean;
  /** Built-in clients (`iam-console`) cannot be changed or deleted through the API. */
  readonly builtIn: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The registry as the provider reads it. */
export interface ClientLookup {
  /** The live client with this id, or null (unknown or deleted). */
  find(clientId: string): Promise<OAuthClient | null>;
  /** Whether `secret` is the live confidential client's current secret (constant time; false for anything else). */
  verifySecret(clientId: string, secret: string): Promise<boolean>;
}

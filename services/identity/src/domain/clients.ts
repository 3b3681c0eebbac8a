/**
 * OAuth clients of the OpenID provider (DESIGN §5 "Clients"): the registry the clients API
 * writes and the provider reads. A client with the `client_credentials` grant is a service
 * account: its tokens have `sub` = its client id and the permissions of its `roles`.
 * Only a hash of a confidential client's secret is kept; the secret is shown once.
 */

export type ClientType = 'public' | 'confidential';

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials' | 'urn:ietf:params:oauth:grant-type:device_code';

export const GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'];

/** The OpenID scopes of the provider (DESIGN §5); an API permission is asked as a scope of its own name, never one of these. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/**
 * The algorithms a client's ID tokens and signed userinfo may use: RS256 (the default, which every
 * relying party verifies: OpenID Connect Core §15.1), ES256 and EdDSA. The key ring keeps a key of
 * each.
 */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const DEFAULT_ID_TOKEN_ALG: SigningAlg = 'RS256';

/** A client's own settings (what the clients API writes). */
export interface ClientSettings {
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
  /**
   * The ceiling of what the client's users may delegate to it at the API (a third-party client):
   * permission names, each asked as a scope of the same name and shown on the consent page. Its
   * users' API tokens carry the granted ones they hold, and no roles (README "API permissions of
   * third-party clients"). Ignored for the first-party console, which acts with the user's rights.
   */
  readonly apiPermissions: readonly string[];
  /** `id_token_signed_response_alg`: RS256 unless the client asks for another. */
  readonly idTokenSignedResponseAlg: SigningAlg;
  /** `userinfo_signed_response_alg`: userinfo answers a JWT signed so; null: plain JSON (the default). */
  readonly userinfoSignedResponseAlg: SigningAlg | null;
  /**
   * A resource server: it may introspect the access tokens the provider issued to any client
   * (README "Introspection and revocation"). Only an Administrator sets it, or changes a client
   * that has it: it reveals other clients' tokens. Confidential clients only.
   */
  readonly resourceServer: boolean;
}

/** A client as the provider reads it: its settings and what the registry says of it. */
export interface OAuthClient extends ClientSettings {
  /** The OAuth `client_id` (also the resource id of `/api/v1/clients/{id}`). */
  readonly clientId: string;
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

/** The stored secret hash of a live confidential client (null for anything else); the client cache's loader. */
export interface ClientSecrets {
  secretHash(clientId: string): Promise<Buffer | null>;
}

/** The built-in console client's id (from configuration, never stored). */
export const CONSOLE_CLIENT_ID = 'iam-console';

/** A client as the registry holds it: the provider's view plus what management needs. */
export interface ClientRecord extends OAuthClient {
  readonly deletedAt: Date | null;
  /** Increases with every change (optimistic updates). */
  readonly version: number;
}

export interface ClientListQuery {
  readonly page: number;
  readonly pageSize: number;
  /** Case-insensitive substring of the name or client id ('' = all). */
  readonly q: string;
  readonly includeDeleted: boolean;
}

export interface ClientPage {
  readonly items: ClientRecord[];
  readonly totalCount: number;
  readonly totalCountExact: boolean;
}

/**
 * The registry as the clients API manages it. Built-in clients (from configuration) are found and
 * listed (first, read only) but never written: the writes see stored clients only. Writes run in
 * the caller's transaction (with the outbox).
 */
export interface ClientStore extends ClientLookup, ClientSecrets {
  /** The client, built-in or stored; a deleted one only with `includeDeleted`; `forUpdate` locks a stored row. */
  get(clientId: string, opts?: { includeDeleted?: boolean; forUpdate?: boolean }): Promise<ClientRecord | null>;
  /** Paged in (createdAt, clientId) order; built-ins first. */
  list(query: ClientListQuery): Promise<ClientPage>;
  /** A new stored client (`secretHash` for a confidential one, else null). */
  insert(c: ClientSettings & { clientId: string; firstParty: boolean; secretHash: Buffer | null }): Promise<ClientRecord>;
  /** Replaces the settings of a live stored client at `version`; null when it is gone or its version moved on (nothing written). */
  update(clientId: string, version: number, settings: ClientSettings & { secretHash?: Buffer | null }): Promise<ClientRecord | null>;
  /** Soft-deletes a live stored client; false when there is none. */
  softDelete(clientId: string): Promise<boolean>;
  /** Replaces a live confidential client's secret hash (the old secret stops at once); false when there is none. */
  setSecretHash(clientId: string, secretHash: Buffer): Promise<boolean>;
}

/**
 * The built-in clients, from configuration: the console (`iam-console`), a public first-party
 * client (code + PKCE, refresh tokens) served at `${publicUrl}/console/`; the hosted account page
 * (`${publicUrl}/account`) signs in as the same client.
 */
export function builtInClients(publicUrl: string): readonly ClientRecord[] {
  const base = publicUrl.replace(/\/+$/, '');
  const epoch = new Date(0);
  return [
    {
      clientId: CONSOLE_CLIENT_ID,
      name: 'IAM console',
      type: 'public',
      redirectUris: [`${base}/console/`, `${base}/account`],
      postLogoutRedirectUris: [`${base}/console/`, `${base}/account`],
      grantTypes: ['authorization_code', 'refresh_token'],
      roles: [],
      requirePar: false,
      dpopBound: false,
      apiPermissions: [],
      idTokenSignedResponseAlg: DEFAULT_ID_TOKEN_ALG,
      userinfoSignedResponseAlg: null,
      resourceServer: false,
      firstParty: true,
      builtIn: true,
      createdAt: epoch,
      updatedAt: epoch,
      deletedAt: null,
      version: 1,
    },
  ];
}

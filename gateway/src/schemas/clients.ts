/**
 * The OAuth clients API's schemas (DESIGN §5 "Clients"). Bodies reject unknown fields; the
 * resource never carries a secret or its hash: `clientSecret` appears only in the answer that made
 * it (create, rotate, a public client made confidential).
 */
import { type Static, Type } from '@sinclair/typebox';
import { NullableTimestamp, Page, PageSize, Timestamp } from './common';

/** Client ids: UUIDs for registered clients; built-in ones are short names (`iam-console`). */
export const ClientId = Type.String({ pattern: '^[A-Za-z0-9._~-]{1,100}$', description: 'A client id (a UUID, or a built-in name such as iam-console)' });
export const ClientIdParams = Type.Object({ id: ClientId }, { additionalProperties: false });

export const CLIENT_GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] as const;
const ClientType = Type.Union([Type.Literal('public'), Type.Literal('confidential')]);
const GrantType = Type.Union(CLIENT_GRANT_TYPES.map((g) => Type.Literal(g)));
const Uris = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 20, description: `${description}; absolute, matched exactly, no fragment, https (http only on localhost, 127.0.0.1 or [::1])` });
const ClientName = Type.String({ minLength: 1, maxLength: 100 });
const ClientRoles = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 50,
  description: 'Names of existing roles whose permissions a service account (client_credentials) carries; you must hold every permission of each (only an Administrator gives Administrator)',
});

const ApiPermissions = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 50,
  description:
    'Names of existing permissions the users of this third-party client may delegate to it: each is asked as a scope of the same name (e.g. `scope=openid users.manage`) and shown on the consent page; its users’ API tokens carry the granted ones they hold, and no roles. You must hold each (an Administrator any). Ignored for the first-party console',
});

/** The algorithms the provider signs ID tokens and userinfo in (its key ring keeps a key of each). */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
const SigningAlg = Type.Union(SIGNING_ALGS.map((a) => Type.Literal(a)));
const IdTokenAlg = Type.Union(SIGNING_ALGS.map((a) => Type.Literal(a)), {
  description: 'id_token_signed_response_alg: the algorithm of its ID tokens. RS256 (the default) is verified by every relying party; ES256 and EdDSA are smaller',
});
const UserinfoAlg = Type.Union([...SIGNING_ALGS.map((a) => Type.Literal(a)), Type.Null()], {
  description: 'userinfo_signed_response_alg: userinfo answers a JWT signed in it; null (the default) answers plain JSON',
});
const ResourceServer = Type.Boolean({
  description: 'A resource server: it may introspect the access tokens the provider issued to any client (RFC 7662). Confidential clients only; only an Administrator sets it or changes such a client',
});

export const OAuthClient = Type.Object(
  {
    clientId: ClientId,
    name: Type.String(),
    type: ClientType,
    redirectUris: Type.Array(Type.String()),
    postLogoutRedirectUris: Type.Array(Type.String()),
    grantTypes: Type.Array(Type.String()),
    roles: Type.Array(Type.String()),
    requirePar: Type.Boolean(),
    dpopBound: Type.Boolean(),
    apiPermissions: Type.Array(Type.String(), { description: 'The API permissions its users may delegate to it (asked as scopes of the same names)' }),
    idTokenSignedResponseAlg: SigningAlg,
    userinfoSignedResponseAlg: Type.Union([SigningAlg, Type.Null()]),
    resourceServer: Type.Boolean(),
    firstParty: Type.Boolean({ description: 'First-party clients skip consent and act with the user’s full rights' }),
    builtIn: Type.Boolean({ description: 'From the configuration (iam-console): cannot be changed, deleted or given a secret' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

/** A client with the secret just made (shown once: only its hash is kept). */
export const OAuthClientWithSecret = Type.Object(
  {
    ...OAuthClient.properties,
    clientSecret: Type.Optional(Type.String({ description: 'Shown once, in this answer only; only a hash is kept' })),
  },
  { additionalProperties: false },
);

export const CreateClientBody = Type.Object(
  {
    name: ClientName,
    type: ClientType,
    redirectUris: Type.Optional(Uris('Redirect URIs')),
    postLogoutRedirectUris: Type.Optional(Uris('Post-logout redirect URIs')),
    grantTypes: Type.Array(GrantType, { minItems: 1, maxItems: CLIENT_GRANT_TYPES.length }),
    roles: Type.Optional(ClientRoles),
    requirePar: Type.Optional(Type.Boolean({ description: 'Pushed authorization requests required (RFC 9126)' })),
    dpopBound: Type.Optional(Type.Boolean({ description: 'Access tokens must be DPoP-bound (RFC 9449)' })),
    apiPermissions: Type.Optional(ApiPermissions),
    idTokenSignedResponseAlg: Type.Optional(IdTokenAlg),
    userinfoSignedResponseAlg: Type.Optional(UserinfoAlg),
    resourceServer: Type.Optional(ResourceServer),
  },
  { additionalProperties: false },
);
export type CreateClientBody = Static<typeof CreateClientBody>;

export const UpdateClientBody = Type.Object(
  {
    name: Type.Optional(ClientName),
    type: Type.Optional(ClientType),
    redirectUris: Type.Optional(Uris('Redirect URIs')),
    postLogoutRedirectUris: Type.Optional(Uris('Post-logout redirect URIs')),
    grantTypes: Type.Optional(Type.Array(GrantType, { minItems: 1, maxItems: CLIENT_GRANT_TYPES.length })),
    roles: Type.Optional(ClientRoles),
    requirePar: Type.Optional(Type.Boolean()),
    dpopBound: Type.Optional(Type.Boolean()),
    apiPermissions: Type.Optional(ApiPermissions),
    idTokenSignedResponseAlg: Type.Optional(IdTokenAlg),
    userinfoSignedResponseAlg: Type.Optional(UserinfoAlg),
    resourceServer: Type.Optional(ResourceServer),
  },
  { additionalProperties: false },
);

/** The collection query of DESIGN §2 (`id` fetches one client); anything else is refused. */
export const ClientQuery = Type.Object(
  {
    page: Type.Optional(Page),
    pageSize: Type.Optional(PageSize),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name or client id' })),
    includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Include deleted clients' })),
    id: Type.Optional(ClientId),
  },
  { additionalProperties: false },
);

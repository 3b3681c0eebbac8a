/**
 * The identity providers API's schemas (issue #40). Bodies reject unknown fields; the resource
 * never carries the client secret: `hasClientSecret` says whether one is set.
 */
import { type Static, Type } from '@sinclair/typebox';
import { NullableTimestamp, Page, PageSize, Timestamp } from './common';

export const ProviderIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const PROVIDER_KINDS = ['oidc', 'github', 'google'] as const;
export const LINKING_MODES = ['verified-email', 're-authenticate', 'never'] as const;
const Kind = Type.Union(PROVIDER_KINDS.map((k) => Type.Literal(k)), { description: 'oidc: any OpenID Connect provider by its discovery URL (Okta, Entra ID, Keycloak, …); github and google: presets' });
const Linking = Type.Union(LINKING_MODES.map((l) => Type.Literal(l)), {
  description:
    'How an upstream identity may join an existing account with its email: verified-email (automatically only when both emails are verified and trustEmailVerified; else the user signs in to that account first), re-authenticate (always signs in first), never',
});
const Name = Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$', description: 'Unique short name (lower-case letters, digits, dashes): the path segment of its callback' });
const DisplayName = Type.String({ minLength: 1, maxLength: 100, description: 'The sign-in button says "Sign in with {displayName}"' });
const DiscoveryUrl = Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], {
  description: 'kind oidc: the OpenID Provider\'s discovery document (https; http only on loopback); null for the presets',
});
const ClientIdField = Type.String({ minLength: 1, maxLength: 500, description: 'The client id registered at the upstream' });
const ClientSecret = Type.String({ maxLength: 1000, description: 'The client secret registered at the upstream: sealed at rest, never shown again ("" for none)' });
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20, description: 'Scopes to ask (default: openid email profile; GitHub read:user user:email)' });
const Claim = Type.String({ minLength: 1, maxLength: 100 });
const ClaimMapping = Type.Object(
  {
    subject: Type.Optional(Type.Array(Claim, { minItems: 1, maxItems: 4, description: 'Claims whose values, joined by ":", are the identity\'s subject (default ["sub"]; Microsoft Entra ID: ["tid", "oid"])' })),
    email: Type.Optional(Claim),
    emailVerified: Type.Optional(Claim),
    givenName: Type.Optional(Claim),
    familyName: Type.Optional(Claim),
  },
  { additionalProperties: false, description: 'Which upstream claims become what (defaults: sub, email, email_verified, given_name, family_name)' },
);
const ResolvedClaimMapping = Type.Object(
  { subject: Type.Array(Type.String()), email: Type.String(), emailVerified: Type.String(), givenName: Type.String(), familyName: Type.String() },
  { additionalProperties: false },
);
const TrustEmailVerified = Type.Boolean({ description: 'Believe the upstream\'s email_verified (default false): only then can it auto-link or sign up a verified email' });
const TrustUpstreamMfa = Type.Boolean({ description: 'Let the upstream\'s amr/acr count for the second-factor policy (default false: a second factor is still asked here)' });
const AllowSignUp = Type.Boolean({ description: 'Create an account for an upstream identity that matches none (default false)' });
const DefaultRoles = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20, description: 'Roles an account it signs up gets; you must hold every permission of each (only an Administrator gives Administrator)' });
const IconUrl = Type.String({ maxLength: 2000, description: 'An https URL of the button\'s icon ("" for none)' });

export const IdentityProvider = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Kind,
    name: Type.String(),
    displayName: Type.String(),
    discoveryUrl: Type.Union([Type.String(), Type.Null()]),
    clientId: Type.String(),
    hasClientSecret: Type.Boolean({ description: 'Whether a client secret is set (it is never shown)' }),
    scopes: Type.Array(Type.String()),
    claimMapping: ResolvedClaimMapping,
    trustEmailVerified: Type.Boolean(),
    trustUpstreamMfa: Type.Boolean(),
    allowSignUp: Type.Boolean(),
    linking: Linking,
    defaultRoles: Type.Array(Type.String()),
    iconUrl: Type.String(),
    enabled: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const CreateProviderBody = Type.Object(
  {
    kind: Kind,
    name: Name,
    displayName: DisplayName,
    discoveryUrl: Type.Optional(DiscoveryUrl),
    clientId: ClientIdField,
    clientSecret: Type.Optional(ClientSecret),
    scopes: Type.Optional(Scopes),
    claimMapping: Type.Optional(ClaimMapping),
    trustEmailVerified: Type.Optional(TrustEmailVerified),
    trustUpstreamMfa: Type.Optional(TrustUpstreamMfa),
    allowSignUp: Type.Optional(AllowSignUp),
    linking: Type.Optional(Linking),
    defaultRoles: Type.Optional(DefaultRoles),
    iconUrl: Type.Optional(IconUrl),
    enabled: Type.Optional(Type.Boolean({ description: 'Shown on the sign-in page (default true)' })),
  },
  { additionalProperties: false },
);
export type CreateProviderBody = Static<typeof CreateProviderBody>;

export const UpdateProviderBody = Type.Object(
  {
    kind: Type.Optional(Kind),
    name: Type.Optional(Name),
    displayName: Type.Optional(DisplayName),
    discoveryUrl: Type.Optional(DiscoveryUrl),
    clientId: Type.Optional(ClientIdField),
    clientSecret: Type.Optional(ClientSecret),
    scopes: Type.Optional(Scopes),
    claimMapping: Type.Optional(ClaimMapping),
    trustEmailVerified: Type.Optional(TrustEmailVerified),
    trustUpstreamMfa: Type.Optional(TrustUpstreamMfa),
    allowSignUp: Type.Optional(AllowSignUp),
    linking: Type.Optional(Linking),
    defaultRoles: Type.Optional(DefaultRoles),
    iconUrl: Type.Optional(IconUrl),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ProviderQuery = Type.Object(
  {
    page: Type.Optional(Page),
    pageSize: Type.Optional(PageSize),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name or display name' })),
    includeDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Include deleted providers' })),
    id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
);

/** An upstream identity linked to a user (keyed on provider, issuer and subject). */
export const LinkedIdentity = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    providerId: Type.String({ format: 'uuid' }),
    provider: Type.String({ description: "The provider's short name (empty once it was deleted)" }),
    providerDisplayName: Type.String(),
    issuer: Type.String(),
    subject: Type.String(),
    email: Type.String({ description: 'The email it last showed (informational)' }),
    createdAt: Timestamp,
    lastUsedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);
export const ProviderButton = Type.Object({ name: Type.String(), displayName: Type.String(), kind: Type.String(), iconUrl: Type.String() }, { additionalProperties: false });
export const MyIdentities = Type.Object({ items: Type.Array(LinkedIdentity), providers: Type.Array(ProviderButton, { description: 'The enabled providers (what can be linked)' }) }, { additionalProperties: false });
export const UserIdentities = Type.Object({ items: Type.Array(LinkedIdentity) }, { additionalProperties: false });
export const ProviderNameParams = Type.Object({ provider: Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$' }) }, { additionalProperties: false });
export const IdentityIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
export const UserIdentityParams = Type.Object({ id: Type.String({ format: 'uuid' }), identityId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
const Binding = Type.String({ minLength: 16, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'A random value the page keeps (e.g. in sessionStorage) and sends again to complete the link' });
export const StartLinkBody = Type.Object({ binding: Binding }, { additionalProperties: false });
export const StartLinkAnswer = Type.Object({ url: Type.String({ description: 'Send the browser here (the provider’s sign-in)' }) }, { additionalProperties: false });
export const CompleteLinkBody = Type.Object(
  { binding: Binding, callbackQuery: Type.String({ minLength: 1, maxLength: 4000, description: 'The query the provider sent the browser back with (code, state, iss)' }) },
  { additionalProperties: false },
);

/**
 * Upstream identity providers as configuration (issue #40 item 1): what an administrator sets
 * through `/api/v1/identity-providers`, and the ports that keep it. The client secret is sealed at
 * rest under the key-encryption key (AAD names the provider) and never answered again: a record
 * only says whether one is set.
 */
import type { LinkingMode } from './federation-linking';

export const PROVIDER_KINDS = ['oidc', 'github', 'google'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export const LINKING_MODES = ['verified-email', 're-authenticate', 'never'] as const satisfies readonly LinkingMode[];

/**
 * Which upstream claims become what here. `subject` names the claims whose values, joined by ":",
 * are the identity's subject (default `["sub"]`); Microsoft Entra ID's stable pair is
 * `["tid", "oid"]` (README, "Microsoft Entra ID"). The others name a claim each.
 */
export interface ClaimMapping {
  readonly subject: readonly string[];
  readonly email: string;
  readonly emailVerified: string;
  readonly givenName: string;
  readonly familyName: string;
}

export const DEFAULT_CLAIM_MAPPING: ClaimMapping = {
  subject: ['sub'],
  email: 'email',
  emailVerified: 'email_verified',
  givenName: 'given_name',
  familyName: 'family_name',
};

export interface IdentityProviderSettings {
  readonly kind: ProviderKind;
  /** A short unique name, the path segment of its callback: lower-case letters, digits, dashes. */
  readonly name: string;
  readonly displayName: string;
  /** The issuer's discovery document (kind oidc); the presets know their own. */
  readonly discoveryUrl: string | null;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly claimMapping: ClaimMapping;
  /** Believe the upstream's `email_verified` (default false). */
  readonly trustEmailVerified: boolean;
  /** Let the upstream's `amr`/`acr` count for our second-factor policy (default false). */
  readonly trustUpstreamMfa: boolean;
  readonly allowSignUp: boolean;
  readonly linking: LinkingMode;
  /** Roles a user signed up through this provider gets (escalation rules of DESIGN §3 bind who sets them). */
  readonly defaultRoles: readonly string[];
  /** An https (or data:) URL of the button's icon; empty for none. */
  readonly iconUrl: string;
  readonly enabled: boolean;
}

export interface IdentityProviderRecord extends IdentityProviderSettings {
  readonly id: string;
  readonly hasClientSecret: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
  readonly version: number;
}

export interface IdentityProviderListQuery {
  readonly page: number;
  readonly pageSize: number;
  readonly q: string;
  readonly includeDeleted: boolean;
}

export interface IdentityProviderPage {
  readonly items: IdentityProviderRecord[];
  readonly totalCount: number;
}

/** The sealed-at-rest client secret's AAD: it opens for this provider only. */
export const providerSecretAad = (id: string): string => `idp-secret:${id}`;

/** Identity providers in the database; the secret goes in and out sealed only (the caller seals). */
export interface IdentityProviderStore {
  list(query: IdentityProviderListQuery): Promise<IdentityProviderPage>;
  /** The live ones that are enabled, by display order (the sign-in page's buttons). */
  listEnabled(): Promise<IdentityProviderRecord[]>;
  /** By id (or name, case-insensitively); deleted ones only with `includeDeleted`. */
  get(idOrName: string, opts?: { includeDeleted?: boolean; forUpdate?: boolean }): Promise<IdentityProviderRecord | null>;
  /** The sealed client secret; null when none is set. */
  sealedSecret(id: string): Promise<Buffer | null>;
  /** CONFLICT-free insert: false when the name is taken among live providers. */
  insert(p: IdentityProviderSettings & { id: string; sealedSecret: Buffer | null }): Promise<IdentityProviderRecord | null>;
  /** Optimistic update at `version`; `sealedSecret` undefined leaves it. Null when the version moved or the name is taken. */
  update(id: string, version: number, p: IdentityProviderSettings & { sealedSecret?: Buffer | null }): Promise<IdentityProviderRecord | null>;
  softDelete(id: string): Promise<boolean>;
}

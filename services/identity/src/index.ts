export { readIdentityConfig, type IdentityConfig } from './config';
export { identityService, type IdentityOptions } from './service';
export type { ClientLookup, OAuthClient } from './domain/clients';
export { StaticClientLookup } from './infra/oidc/static-clients';

export { readIdentityConfig, type IdentityConfig } from './config';
export { identityService, type IdentityOptions } from './service';
export type { AuthFaults } from './app/auth';
export type { PresetEndpoints } from './infra/federation/upstream-client';
export { PgClientStore } from './infra/client-store';
export { builtInClients, type ClientLookup, type OAuthClient } from './domain/clients';

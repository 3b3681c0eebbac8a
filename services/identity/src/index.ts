export { readIdentityConfig, type IdentityConfig } from './config';
export { identityService } from './service';
export { PgClientStore } from './infra/client-store';
export { builtInClients, type ClientLookup, type OAuthClient } from './domain/clients';

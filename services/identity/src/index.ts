export { readIdentityConfig, type IdentityConfig } from './config';
export { identityService } from './service';

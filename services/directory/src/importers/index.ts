export { fromAuth0 } from './auth0';
export { fromCsv, parseCsv } from './csv';
export { type FirebaseHashConfig, fromFirebase } from './firebase';
export { fromKeycloak, keycloakHash } from './keycloak';
export type { Converted, ImportUserJson } from './types';

/**
 * What a client's settings may be (DESIGN §5 "Clients"): every violation named by its field, so a
 * bad request is one 400 that lists them all and writes nothing.
 */
import { AppError, type FieldError } from '@iam/platform';
import { type ClientSettings, GRANT_TYPES, type GrantType, OIDC_SCOPES, SIGNING_ALGS, type SigningAlg } from './clients';

export const CLIENT_NAME_MAX = 100;
export const CLIENT_URIS_MAX = 20;
export const CLIENT_URI_MAX = 2_000;
export const CLIENT_ROLES_MAX = 50;
export const ROLE_NAME_MAX = 100;
export const CLIENT_API_PERMISSIONS_MAX = 50;
export const PERMISSION_NAME_MAX = 100;

/** A scope token (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN_RE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const OIDC_SCOPE_NAMES: ReadonlySet<string> = new Set(OIDC_SCOPES);
const DEVICE_GRANT: GrantType = 'urn:ietf:params:oauth:grant-type:device_code';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a redirect URI is refused, or undefined: absolute, no fragment, `https` (or `http` on a loopback host), no user info. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0 || uri.length > CLIENT_URI_MAX) return `must be 1..${CLIENT_URI_MAX} characters`;
  if (CONTROL_RE.test(uri) || /\s/.test(uri)) return 'must not contain spaces or control characters';
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not have a fragment';
  if (u.username || u.password) return 'must not carry user information';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:') return LOOPBACK_HOSTS.has(u.hostname) ? undefined : 'may use http only on a loopback host (localhost, 127.0.0.1, [::1])';
  return 'must use https (or http on a loopback host)';
}

const isGrant = (g: string): g is GrantType => (GRANT_TYPES as readonly string[]).includes(g);

function checkUris(errors: FieldError[], field: string, uris: readonly string[]): void {
  if (uris.length > CLIENT_URIS_MAX) errors.push({ field, message: `must have at most ${CLIENT_URIS_MAX} entries` });
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) errors.push({ field: `${field}[${i}]`, message: problem });
  });
  if (new Set(uris).size !== uris.length) errors.push({ field, message: 'must not repeat an entry' });
}

/** Settings as given: the enumerations as strings, checked by checkClientSettings. */
export type GivenClientSettings = Omit<ClientSettings, 'type' | 'grantTypes' | 'idTokenSignedResponseAlg' | 'userinfoSignedResponseAlg'> & {
  type: string;
  grantTypes: readonly string[];
  idTokenSignedResponseAlg: string;
  userinfoSignedResponseAlg: string | null;
};

const isSigningAlg = (a: string): a is SigningAlg => (SIGNING_ALGS as readonly string[]).includes(a);

/** Settings as given (types unchecked beyond strings): VALIDATION naming each bad field, else the settings typed. */
export function checkClientSettings(s: GivenClientSettings): ClientSettings {
  const errors: FieldError[] = [];
  const name = s.name.trim();
  if (name.length === 0 || name.length > CLIENT_NAME_MAX) errors.push({ field: 'name', message: `must be 1..${CLIENT_NAME_MAX} characters` });
  else if (CONTROL_RE.test(name)) errors.push({ field: 'name', message: 'must not contain control characters' });
  const type = s.type === 'public' || s.type === 'confidential' ? s.type : undefined;
  if (!type) errors.push({ field: 'type', message: 'must be "public" or "confidential"' });
  checkUris(errors, 'redirectUris', s.redirectUris);
  checkUris(errors, 'postLogoutRedirectUris', s.postLogoutRedirectUris);
  const grants = s.grantTypes.filter(isGrant);
  if (s.grantTypes.length === 0) errors.push({ field: 'grantTypes', message: 'must name at least one grant type' });
  else if (grants.length !== s.grantTypes.length) errors.push({ field: 'grantTypes', message: `must be among ${GRANT_TYPES.join(', ')}` });
  else if (new Set(grants).size !== grants.length) errors.push({ field: 'grantTypes', message: 'must not repeat a grant type' });
  if (grants.includes('client_credentials') && type === 'public') errors.push({ field: 'grantTypes', message: 'client_credentials is for confidential clients only' });
  if (grants.includes('authorization_code') && s.redirectUris.length === 0) errors.push({ field: 'redirectUris', message: 'authorization_code needs at least one redirect URI' });
  if (grants.includes('refresh_token') && !grants.some((g) => g === 'authorization_code' || g === 'urn:ietf:params:oauth:grant-type:device_code')) {
    errors.push({ field: 'grantTypes', message: 'refresh_token needs authorization_code or the device code grant' });
  }
  const roles = s.roles.map((r) => r.trim());
  if (roles.length > CLIENT_ROLES_MAX) errors.push({ field: 'roles', message: `must have at most ${CLIENT_ROLES_MAX} entries` });
  roles.forEach((r, i) => {
    if (r.length === 0 || r.length > ROLE_NAME_MAX) errors.push({ field: `roles[${i}]`, message: `must be 1..${ROLE_NAME_MAX} characters` });
  });
  if (new Set(roles.map((r) => r.toLowerCase())).size !== roles.length) errors.push({ field: 'roles', message: 'must not repeat a role' });
  if (roles.length > 0 && !grants.includes('client_credentials')) errors.push({ field: 'roles', message: 'roles are for clients with the client_credentials grant only' });
  const apiPermissions = checkApiPermissions(errors, s.apiPermissions, grants);
  const algs = `must be one of ${SIGNING_ALGS.join(', ')}`;
  const idTokenAlg = isSigningAlg(s.idTokenSignedResponseAlg) ? s.idTokenSignedResponseAlg : undefined;
  if (!idTokenAlg) errors.push({ field: 'idTokenSignedResponseAlg', message: algs });
  const given = s.userinfoSignedResponseAlg;
  const userinfoAlg = given === null ? null : isSigningAlg(given) ? given : undefined;
  if (userinfoAlg === undefined) errors.push({ field: 'userinfoSignedResponseAlg', message: `${algs}, or null (plain JSON)` });
  // A resource server introspects: it must authenticate, so it has a secret.
  if (s.resourceServer && type === 'public') errors.push({ field: 'resourceServer', message: 'a resource server must be a confidential client (it authenticates to introspect)' });
  if (errors.length > 0 || !type || !idTokenAlg || userinfoAlg === undefined) throw AppError.validation('The client is not valid.', errors);
  return { ...s, name, type, grantTypes: grants, roles, apiPermissions, idTokenSignedResponseAlg: idTokenAlg, userinfoSignedResponseAlg: userinfoAlg };
}

/**
 * The API permissions users may delegate to the client, as given (their existence and the
 * writer's right to list them are the use case's, against the directory): each usable as a scope
 * (a permission is asked by its name), none an OpenID scope, none twice, and only for a client
 * users sign in to (the code or device code grant).
 */
function checkApiPermissions(errors: FieldError[], given: readonly string[], grants: readonly GrantType[]): string[] {
  const names = given.map((p) => p.trim());
  if (names.length > CLIENT_API_PERMISSIONS_MAX) errors.push({ field: 'apiPermissions', message: `must have at most ${CLIENT_API_PERMISSIONS_MAX} entries` });
  names.forEach((p, i) => {
    const field = `apiPermissions[${i}]`;
    if (p.length === 0 || p.length > PERMISSION_NAME_MAX) errors.push({ field, message: `must be 1..${PERMISSION_NAME_MAX} characters` });
    else if (!SCOPE_TOKEN_RE.test(p)) errors.push({ field, message: 'must be a permission name that can be asked as a scope (printable ASCII without spaces, quotes or backslashes)' });
    else if (OIDC_SCOPE_NAMES.has(p.toLowerCase())) errors.push({ field, message: `is an OpenID scope, not an API permission` });
  });
  if (new Set(names.map((p) => p.toLowerCase())).size !== names.length) errors.push({ field: 'apiPermissions', message: 'must not repeat a permission' });
  if (names.length > 0 && !grants.includes('authorization_code') && !grants.includes(DEVICE_GRANT)) {
    errors.push({ field: 'apiPermissions', message: 'API permissions are for clients users sign in to (authorization_code or the device code grant)' });
  }
  return names;
}


/** The redirect URIs the provider sends codes to: the registered ones, when the client has the code grant. */
const codeReceivers = (s: Pick<ClientSettings, 'grantTypes' | 'redirectUris'>): readonly string[] => (s.grantTypes.includes('authorization_code') ? s.redirectUris : []);

/**
 * What in a change could let a new party receive the client's codes or tokens (DESIGN §5 decision,
 * services/identity/README.md "OAuth clients"): a redirect URI the provider did not send codes to
 * before (added, or the code grant turned on), another type (a public client needs no secret; a
 * confidential one gets a new secret), the device code grant turned on (anyone who can start a flow
 * as the client could reap a remembered consent). Empty when nothing of that kind changed; a
 * removal alone, a rename or the other settings never count. The caller ends every grant of the
 * client when it is not empty (a rotated secret always does).
 */
export function newReceivers(before: ClientSettings, after: ClientSettings): string[] {
  const reasons: string[] = [];
  const known = new Set(codeReceivers(before));
  if (codeReceivers(after).some((uri) => !known.has(uri))) reasons.push('redirectUris');
  if (before.type !== after.type) reasons.push('type');
  if (after.grantTypes.includes(DEVICE_GRANT) && !before.grantTypes.includes(DEVICE_GRANT)) reasons.push('grantTypes');
  return reasons;
}

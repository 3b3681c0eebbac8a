/**
 * The account page's calls for second factors (DESIGN §5): TOTP, recovery codes and passkeys,
 * through the console's one client (openapi-fetch over the generated types), with TanStack Query
 * keys. Adding or removing a factor and new recovery codes answer 403
 * `urn:iam:problem:reauthentication-required` when the sign-in is over five minutes old
 * (`needsReauthentication`).
 */
import { api, call } from '../api/client';
import { ProblemError } from '../api/problem';
import type { paths } from '../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type MfaStatus = Json<paths['/api/v1/me/mfa']['get']['responses'][200]>;
export type Passkey = Json<paths['/api/v1/me/passkeys']['get']['responses'][200]>['items'][number];

export const factorKeys = { status: ['account', 'mfa'] as const, passkeys: ['account', 'passkeys'] as const };

export const REAUTHENTICATION_REQUIRED = 'urn:iam:problem:reauthentication-required';

/** Whether a failed call asks for a fresh sign-in (the reauthentication window). */
export const needsReauthentication = (err: unknown): boolean => err instanceof ProblemError && err.problem.type === REAUTHENTICATION_REQUIRED;

export const factors = {
  status: () => call(() => api.GET('/api/v1/me/mfa')),
  startTotp: () => call(() => api.POST('/api/v1/me/mfa/totp')),
  activateTotp: (code: string) => call(() => api.POST('/api/v1/me/mfa/totp/activate', { body: { code } })),
  removeTotp: () => call(() => api.DELETE('/api/v1/me/mfa/totp')),
  newRecoveryCodes: () => call(() => api.POST('/api/v1/me/mfa/recovery-codes')),
  passkeys: () => call(() => api.GET('/api/v1/me/passkeys')),
  passkeyOptions: () => call(() => api.POST('/api/v1/me/passkeys/options')),
  registerPasskey: (name: string, response: unknown) =>
    // The credential is the browser's (@simplewebauthn/browser's RegistrationResponseJSON); the schema types its outer shape.
    call(() => api.POST('/api/v1/me/passkeys', { body: { name, response: response as never } })),
  renamePasskey: (id: string, name: string) => call(() => api.PATCH('/api/v1/me/passkeys/{id}', { params: { path: { id } }, body: { name } })),
  removePasskey: (id: string) => call(() => api.DELETE('/api/v1/me/passkeys/{id}', { params: { path: { id } } })),
};

/**
 * Public webhook types made from identity's events: lockouts, sessions, second factors, OAuth
 * clients and consents. Never a token, a code, a secret or a credential id (a passkey only as the
 * hash identity publishes); email-action requests (they carry a sealed token) are not published.
 */
import { type ClientState, SUBJECTS, decodeEvent } from '../events';
import { changesOf, type View } from './changes';
import { CHANGES, arr, bool, int, obj, str, uuid, type JsonSchema } from './schema';
import type { CatalogEntry } from './types';

const USER_ID = uuid('The user id');
const exampleUserId = '5b0e2c51-3c55-4c3e-9b5e-3f7f2f6a8c11';

const clientView = (c: ClientState | undefined): View | undefined =>
  c
    ? {
        name: c.name,
        type: c.type,
        redirectUris: c.redirectUris,
        postLogoutRedirectUris: c.postLogoutRedirectUris,
        grantTypes: c.grantTypes,
        roles: [...c.roles].sort(),
        requirePar: c.requirePar,
        dpopBound: c.dpopBound,
        apiPermissions: c.apiPermissions,
      }
    : undefined;
const CLIENT = {
  id: str('The client id'),
  name: str(),
  type: { enum: ['public', 'confidential'] },
  redirectUris: arr(str()),
  postLogoutRedirectUris: arr(str()),
  grantTypes: arr(str()),
  roles: arr(str(), 'Roles of a service account, sorted'),
  requirePar: bool(),
  dpopBound: bool(),
  apiPermissions: arr(str()),
};
const exampleClient = {
  id: '6f1d2c3b-4a59-4867-9a1b-2c3d4e5f6a7b',
  name: 'CRM',
  type: 'confidential',
  redirectUris: ['https://crm.example.com/callback'],
  postLogoutRedirectUris: [],
  grantTypes: ['authorization_code', 'refresh_token'],
  roles: [],
  requirePar: false,
  dpopBound: false,
  apiPermissions: [],
};

function clientEntry(type: string, subject: typeof SUBJECTS.clientCreated, description: string, kind: 'plain' | 'updated' | 'rotated'): CatalogEntry {
  const extra: Record<string, JsonSchema> = kind === 'updated' ? { changes: CHANGES, grantsRevoked: int('Users whose grants to the client ended with the change (0: none)') } : kind === 'rotated' ? { grantsRevoked: int('Users whose grants ended with the rotation') } : {};
  return {
    type,
    version: 1,
    description,
    subject,
    schema: obj({ ...CLIENT, ...extra }),
    example:
      kind === 'updated'
        ? { ...exampleClient, name: 'CRM (EU)', changes: [{ field: 'name', before: 'CRM', after: 'CRM (EU)' }], grantsRevoked: 0 }
        : kind === 'rotated'
          ? { ...exampleClient, grantsRevoked: 12 }
          : exampleClient,
    toData: (p) => {
      const e = decodeEvent(subject, p);
      const after = clientView(e.after) ?? {};
      const revoked = e.grantsRevoked ? e.grantsRevokedCount : 0;
      if (kind === 'updated') return { id: e.clientId, ...after, changes: changesOf(e.changedFields, clientView(e.before), after), grantsRevoked: revoked };
      if (kind === 'rotated') return { id: e.clientId, ...after, grantsRevoked: revoked };
      return { id: e.clientId, ...after };
    },
  };
}

const FACTOR = {
  userId: USER_ID,
  factor: { enum: ['totp', 'recovery_codes', 'webauthn', ''], description: 'The factor; empty for a reset of every factor' },
  name: str('Passkeys: the name its owner gave it'),
  credential: str('Passkeys: the first 16 hex digits of the SHA-256 of the credential id (never the id)'),
  recoveryCodesLeft: int(),
};
function factorEntry(type: string, subject: typeof SUBJECTS.mfaEnrolled, description: string, withReason: boolean): CatalogEntry {
  return {
    type,
    version: 1,
    description,
    subject,
    schema: obj(withReason ? { ...FACTOR, reason: str("The administrator's reason") } : FACTOR, ['name', 'credential']),
    example: withReason
      ? { userId: exampleUserId, factor: '', recoveryCodesLeft: 0, reason: 'lost phone' }
      : { userId: exampleUserId, factor: 'webauthn', name: 'YubiKey', credential: '9f86d081884c7d65', recoveryCodesLeft: 10 },
    toData: (p) => {
      const e = decodeEvent(subject, p);
      return {
        userId: e.userId,
        factor: e.factor,
        ...(e.name ? { name: e.name } : {}),
        ...(e.credential ? { credential: e.credential } : {}),
        recoveryCodesLeft: e.recoveryCodesLeft,
        ...(withReason ? { reason: e.reason } : {}),
      };
    },
  };
}

export const IDENTITY_TYPES: readonly CatalogEntry[] = [
  {
    type: 'user.locked',
    version: 1,
    description: "A failed sign-in locked the user's account (AUTH_MAX_FAILED_ATTEMPTS reached).",
    subject: SUBJECTS.accountLocked,
    schema: obj({ id: USER_ID, failures: int('Failed attempts counted') }),
    example: { id: exampleUserId, failures: 5 },
    // An attempt against no account names no user: nothing to tell.
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.accountLocked, p);
      return e.userId ? { id: e.userId, failures: e.failures } : null;
    },
  },
  {
    type: 'user.unlocked',
    version: 1,
    description: "An administrator cleared a user's failed-sign-in lock.",
    subject: SUBJECTS.accountUnlocked,
    schema: obj({ id: USER_ID }),
    example: { id: exampleUserId },
    toData: (p) => ({ id: decodeEvent(SUBJECTS.accountUnlocked, p).userId }),
  },
  {
    type: 'session.started',
    version: 1,
    description: 'A user signed in (a REST login, or the sign-in page of the OpenID provider).',
    subject: SUBJECTS.loginSucceeded,
    schema: obj({ userId: USER_ID }),
    example: { userId: exampleUserId },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.loginSucceeded, p);
      return e.userId ? { userId: e.userId } : null;
    },
  },
  {
    type: 'session.ended',
    version: 1,
    description: 'A session was ended by its user or an administrator; its access tokens were revoked.',
    subject: SUBJECTS.sessionEnded,
    schema: obj({ userId: USER_ID, sessionId: str(), tokensRevoked: int() }),
    example: { userId: exampleUserId, sessionId: 'b6a1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d', tokensRevoked: 1 },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.sessionEnded, p);
      return { userId: e.userId, sessionId: e.sessionId, tokensRevoked: e.tokensRevoked };
    },
  },
  factorEntry('mfa.enrolled', SUBJECTS.mfaEnrolled, 'A user added a second factor (TOTP, a passkey) or made new recovery codes.', false),
  factorEntry('mfa.removed', SUBJECTS.mfaRemoved as typeof SUBJECTS.mfaEnrolled, 'A user removed a second factor.', false),
  factorEntry('mfa.reset', SUBJECTS.mfaReset as typeof SUBJECTS.mfaEnrolled, "An administrator removed every second factor of a user.", true),
  clientEntry('client.created', SUBJECTS.clientCreated, 'An OAuth client was registered (never its secret).', 'plain'),
  clientEntry('client.updated', SUBJECTS.clientUpdated as typeof SUBJECTS.clientCreated, "An OAuth client's settings changed; a change that could let a new party receive its codes ended its users' grants.", 'updated'),
  clientEntry('client.deleted', SUBJECTS.clientDeleted as typeof SUBJECTS.clientCreated, 'An OAuth client was deleted; its grants and tokens were revoked.', 'plain'),
  clientEntry('client.secret_rotated', SUBJECTS.clientSecretRotated as typeof SUBJECTS.clientCreated, "A confidential client's secret was rotated (never the secret); its users' grants ended.", 'rotated'),
  {
    type: 'consent.granted',
    version: 1,
    description: 'A user allowed a third-party client the scopes on the consent page.',
    subject: SUBJECTS.consentGranted,
    schema: obj({ userId: USER_ID, clientId: str(), scopes: arr(str(), 'Sorted') }),
    example: { userId: exampleUserId, clientId: exampleClient.id, scopes: ['email', 'openid'] },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.consentGranted, p);
      return { userId: e.userId, clientId: e.clientId, scopes: [...e.scopes].sort() };
    },
  },
];

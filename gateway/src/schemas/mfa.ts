/** Schemas of second factors and sessions (DESIGN §5). */
import { Type } from '@sinclair/typebox';
import { Problem, Uuid } from './common';

const MfaToken = Type.String({
  minLength: 1,
  maxLength: 200,
  writeOnly: true,
  description: 'The mfaToken of the mfa-required problem',
});
const TotpCode = Type.String({
  pattern: '^[0-9]{6}$',
  writeOnly: true,
  description: 'The 6-digit code of the authenticator app',
});

export const MFA_REQUIRED_TYPE = 'urn:iam:problem:mfa-required';
export const MFA_ENROLMENT_REQUIRED_TYPE = 'urn:iam:problem:mfa-enrolment-required';
/** The account must choose a new password (imported with passwordChangeRequired), after its factors: the mfaToken takes newPassword. */
export const PASSWORD_CHANGE_REQUIRED_TYPE = 'urn:iam:problem:password-change-required';

/**
 * A login's 401: a wrong password is a plain problem; the right password of an account with a
 * second factor is `mfa-required` with the members below (or `mfa-enrolment-required` for a
 * member of MFA_REQUIRED_ROLES with no factor yet: the token then only enrols, then completes), or
 * `password-change-required` for an account that must choose a new password (after its factors:
 * the token then only takes `newPassword`, at the same POST /api/v1/auth/mfa).
 */
const LoginProblemBody = Type.Object(
  {
    ...Problem.properties,
    mfaToken: Type.Optional(Type.String({ description: 'mfa-required / mfa-enrolment-required / password-change-required: single use, 5 minutes, for POST /api/v1/auth/mfa' })),
    methods: Type.Optional(Type.Array(Type.String(), { description: 'The second factors the account can answer with: totp, recovery_code, webauthn (none for password-change-required)' })),
    expiresIn: Type.Optional(Type.Integer({ description: 'Seconds until mfaToken expires' })),
  },
);

/** The login's 401 (a problem document, its content type named here). */
export const LoginProblem = {
  description: `A refused login; the right password of an account with a second factor: type ${MFA_REQUIRED_TYPE} (or ${MFA_ENROLMENT_REQUIRED_TYPE}) with mfaToken and methods; of an account that must choose a new password (after its factors): ${PASSWORD_CHANGE_REQUIRED_TYPE} with mfaToken`,
  content: { 'application/problem+json': { schema: LoginProblemBody } },
};

/**
 * A WebAuthn L3 credential in its JSON form (RegistrationResponseJSON / AuthenticationResponseJSON,
 * as @simplewebauthn/browser makes it). Its inner `response` is the authenticator's and is
 * checked by identity (@simplewebauthn/server), not here.
 */
export const WebauthnCredential = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$' }),
    rawId: Type.String({ minLength: 1, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$' }),
    type: Type.Literal('public-key'),
    response: Type.Object({ clientDataJSON: Type.String({ maxLength: 4096 }) }, { additionalProperties: Type.Union([Type.String({ maxLength: 16384 }), Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 }), Type.Number()]) }),
    clientExtensionResults: Type.Object({}, { additionalProperties: true }),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false, description: 'The credential the browser made (WebAuthn L3 JSON form)' },
);

/** WebAuthn L3 options in their JSON form, for navigator.credentials.create/get (or @simplewebauthn/browser). */
export const WebauthnOptions = Type.Object({}, { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON / PublicKeyCredentialRequestOptionsJSON' });

const PasskeyName = Type.String({ minLength: 1, maxLength: 64, description: 'A name to tell the passkey apart ("Laptop")' });

export const PasskeyRegistrationBody = Type.Object({ name: PasskeyName, response: WebauthnCredential }, { additionalProperties: false });
export const PasskeyRenameBody = Type.Object({ name: PasskeyName }, { additionalProperties: false });
export const PasskeySignInBody = Type.Object({ response: WebauthnCredential }, { additionalProperties: false });

export const Passkey = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    deviceType: Type.String({ description: 'singleDevice (bound to one authenticator) or multiDevice (synced)' }),
    backedUp: Type.Boolean(),
    transports: Type.Array(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
export const PasskeyList = Type.Object({ items: Type.Array(Passkey) }, { additionalProperties: false });

export const MfaBody = Type.Object(
  {
    mfaToken: MfaToken,
    code: Type.Optional(TotpCode),
    webauthn: Type.Optional(WebauthnCredential),
    passkey: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 64 }), response: WebauthnCredential },
        { additionalProperties: false, description: 'Enrolment-only mfaToken: a new passkey for POST /api/v1/auth/mfa/passkey/options (its registration is the factor)' },
      ),
    ),
    recoveryCode: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        writeOnly: true,
        description: 'One of the recovery codes (single use)',
      }),
    ),
    newPassword: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        writeOnly: true,
        description: `A ${PASSWORD_CHANGE_REQUIRED_TYPE} token: the account's new password (≥ 12 characters with upper- and lower-case letters, a digit and a special character; not the current one)`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The mfa token and exactly one answer: code, recoveryCode, webauthn (a passkey\'s assertion for POST /api/v1/auth/mfa/webauthn/options) or passkey (enrolment); newPassword for a password-change-required token',
  },
);

export const MfaTokenBody = Type.Object({ mfaToken: MfaToken }, { additionalProperties: false });

export const MfaStatus = Type.Object(
  {
    totp: Type.Boolean({
      description: 'An authenticator app (TOTP) is active',
    }),
    passkeys: Type.Integer({ description: 'Passkeys registered' }),
    recoveryCodesLeft: Type.Integer({ description: 'Unused recovery codes' }),
  },
  { additionalProperties: false },
);

export const TotpEnrolment = Type.Object(
  {
    secret: Type.String({
      description: 'Base32 secret (shown once; active after POST .../totp/activate with a right code)',
    }),
    otpauthUri: Type.String({
      description: 'otpauth://totp/... for a QR code',
    }),
  },
  { additionalProperties: false },
);

export const CodeBody = Type.Object({ code: TotpCode }, { additionalProperties: false });

export const RecoveryCodes = Type.Object(
  {
    codes: Type.Array(Type.String(), {
      description: 'Ten single-use codes, shown once; they replace any earlier set',
    }),
  },
  { additionalProperties: false },
);

/** A session's id (a REST login's refresh family, or identity's record of an OpenID provider session). */
const SessionId = Uuid;

export const Session = Type.Object(
  {
    id: SessionId,
    device: Type.String({
      description: 'The user agent in short, e.g. "Chrome 131 on Linux"',
    }),
    userAgent: Type.String(),
    ip: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.String({ format: 'date-time' }),
    current: Type.Boolean({
      description: 'The session of the token that asked',
    }),
    amr: Type.Array(Type.String(), {
      description: 'How the user signed in (RFC 8176: pwd, otp, hwk, swk, mfa)',
    }),
  },
  { additionalProperties: false },
);

export const SessionList = Type.Object({ items: Type.Array(Session) }, { additionalProperties: false });

export const SessionParams = Type.Object({ id: SessionId }, { additionalProperties: false });
export const UserSessionParams = Type.Object({ id: Uuid, sid: SessionId }, { additionalProperties: false });

export const AccountSecurity = Type.Object(
  {
    locked: Type.Boolean({
      description: 'Locked by failed sign-in attempts (AUTH_MAX_FAILED_ATTEMPTS)',
    }),
    lockedUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    failedAttempts: Type.Integer({
      description: 'Failed attempts counted in the current window',
    }),
    mfa: MfaStatus,
  },
  { additionalProperties: false },
);

export const ResetFactorsBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Why (recorded in the audit trail)',
    }),
  },
  { additionalProperties: false },
);

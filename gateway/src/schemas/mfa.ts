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

/**
 * A login's 401: a wrong password is a plain problem; the right password of an account with a
 * second factor is `mfa-required` with the members below (or `mfa-enrolment-required` for a
 * member of MFA_REQUIRED_ROLES with no factor yet: the token then only enrols, then completes).
 */
const LoginProblemBody = Type.Object(
  {
    ...Problem.properties,
    mfaToken: Type.Optional(Type.String({ description: 'mfa-required / mfa-enrolment-required: single use, 5 minutes, for POST /api/v1/auth/mfa' })),
    methods: Type.Optional(Type.Array(Type.String(), { description: 'The second factors the account can answer with: totp, recovery_code, webauthn' })),
    expiresIn: Type.Optional(Type.Integer({ description: 'Seconds until mfaToken expires' })),
  },
);

/** The login's 401 (a problem document, its content type named here). */
export const LoginProblem = {
  description: `A refused login; the right password of an account with a second factor: type ${MFA_REQUIRED_TYPE} (or ${MFA_ENROLMENT_REQUIRED_TYPE}) with mfaToken and methods`,
  content: { 'application/problem+json': { schema: LoginProblemBody } },
};

export const MfaBody = Type.Object(
  {
    mfaToken: MfaToken,
    code: Type.Optional(TotpCode),
    recoveryCode: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        writeOnly: true,
        description: 'One of the recovery codes (single use)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'The mfa token and exactly one factor: code or recoveryCode',
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

export const Session = Type.Object(
  {
    id: Uuid,
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
      description: 'How the user signed in (RFC 8176: pwd, otp, mfa)',
    }),
  },
  { additionalProperties: false },
);

export const SessionList = Type.Object({ items: Type.Array(Session) }, { additionalProperties: false });

export const SessionParams = Type.Object({ id: Uuid }, { additionalProperties: false });

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

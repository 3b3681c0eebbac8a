/** Schemas of the authentication routes. */
import { Type } from '@sinclair/typebox';
import { Uuid } from './common';

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024, writeOnly: true }),
  },
  { additionalProperties: false },
);

const AccessTokenFields = {
  token: Type.String({ description: 'JWT access token' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Seconds until the access token expires' }),
};

const TokenFields = {
  ...AccessTokenFields,
  refreshToken: Type.String({ description: 'One-time refresh token' }),
  refreshExpiresIn: Type.Integer({ description: 'Seconds until the refresh token expires' }),
};

export const TokenResponse = Type.Object(TokenFields, { additionalProperties: false });

const LoginUser = Type.Object(
  { id: Uuid, firstName: Type.String(), lastName: Type.String(), email: Type.String(), roles: Type.Array(Type.String()) },
  { additionalProperties: false },
);

export const LoginResponse = Type.Object({ ...TokenFields, user: LoginUser }, { additionalProperties: false });

/** Compact's login: the access token only (the refresh token is the Full profile's, spec §1). */
export const AccessOnlyLoginResponse = Type.Object({ ...AccessTokenFields, user: LoginUser }, { additionalProperties: false });

/**
 * Whether a route's response schemas (by status) answer with tokens: a success response with a
 * `token` or `refreshToken` field. Such routes are never cached (plugins/auth.ts), in every profile.
 */
export function answersTokens(response: unknown): boolean {
  if (typeof response !== 'object' || response === null) return false;
  return Object.entries(response).some(([status, schema]) => {
    const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties;
    return /^2/.test(status) && properties !== undefined && ('token' in properties || 'refreshToken' in properties);
  });
}

export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

const Jwk = Type.Object({
  kid: Type.String(),
  kty: Type.String(),
  alg: Type.String(),
  use: Type.String(),
  crv: Type.Optional(Type.String()),
  x: Type.Optional(Type.String()),
  y: Type.Optional(Type.String()),
  n: Type.Optional(Type.String()),
  e: Type.Optional(Type.String()),
});

export const Jwks = Type.Object({ keys: Type.Array(Jwk) }, { additionalProperties: false });

export const EmailBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false });

export const ConfirmResetBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    newPassword: Type.String({ minLength: 1, maxLength: 1024, writeOnly: true }),
  },
  { additionalProperties: false },
);

export const TokenBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const Accepted = Type.Object(
  { status: Type.Literal('accepted'), message: Type.String() },
  { additionalProperties: false, description: 'The same body whether or not the account exists' },
);

/**
 * Request and response schemas of the resources (DESIGN §2). Bodies reject unknown fields; a
 * response can only carry the fields listed here (no password, hash or internal column).
 */
import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp, Uuid } from './common';

const Name = Type.String({ minLength: 1, maxLength: 100 });
const Description = Type.String({ maxLength: 500 });
const Email = Type.String({ minLength: 3, maxLength: 320, description: 'Trimmed and lower-cased on write' });
const Password = Type.String({ minLength: 1, maxLength: 128, writeOnly: true, description: '≥ 12 characters with upper- and lower-case letters, a digit and a special character' });
const Phone = Type.Integer({ minimum: 0, maximum: 999_999_999_999_999, description: 'A number, not a string' });
const RoleNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100, description: 'Names of existing roles' });

export const User = Type.Object(
  {
    id: Uuid,
    firstName: Type.String(),
    lastName: Type.String(),
    email: Type.String(),
    phone: Type.Union([Type.Integer(), Type.Null()]),
    emailVerified: Type.Boolean(),
    roles: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    firstName: Name,
    lastName: Name,
    email: Email,
    phone: Type.Optional(Phone),
    password: Password,
    roles: Type.Optional(RoleNames),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    firstName: Type.Optional(Name),
    lastName: Type.Optional(Name),
    email: Type.Optional(Email),
    phone: Type.Optional(Type.Union([Phone, Type.Null()], { description: 'A number; null clears it' })),
    password: Type.Optional(Password),
    roles: Type.Optional(RoleNames),
  },
  { additionalProperties: false },
);

export const Role = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    permissions: Type.Array(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const Permission = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const CreateNamedBody = Type.Object({ name: Name, description: Type.Optional(Description) }, { additionalProperties: false });
export const UpdateNamedBody = Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }, { additionalProperties: false });

export const RolePermission = Type.Object(
  {
    id: Uuid,
    roleId: Uuid,
    permissionId: Uuid,
    roleName: Type.String(),
    permissionName: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const CreateLinkBody = Type.Object({ roleId: Uuid, permissionId: Uuid }, { additionalProperties: false });
export const UpdateLinkBody = Type.Object({ roleId: Type.Optional(Uuid), permissionId: Type.Optional(Uuid) }, { additionalProperties: false });

/** An organization's SCIM connections (issue #42): their schemas. The token appears only in the creation's answer. */
import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp, Uuid } from './common';

export const ScimConnection = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    name: Type.String(),
    createdBy: Type.String(),
    createdAt: Timestamp,
    revokedAt: NullableTimestamp,
    lastUsedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);
export const CreatedScimConnection = Type.Object(
  {
    connection: ScimConnection,
    token: Type.String({ description: 'The bearer token of the SCIM client (Okta, Entra ID): shown this once, stored hashed' }),
    baseUrl: Type.String({ description: "The SCIM base URL to give the identity provider: /scim/v2/{organizationId}" }),
  },
  { additionalProperties: false },
);
export const CreateScimConnectionBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const ScimConnectionParams = Type.Object({ id: Uuid, connectionId: Uuid }, { additionalProperties: false });

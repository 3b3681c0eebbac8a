/** Schemas of the audit trail's routes (audit.read). */
import { Type } from '@sinclair/typebox';
import { PAGE_SIZE_MAX, Timestamp, Uuid } from './common';

const Text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const AUDIT_PAGE_SIZE_DEFAULT = 25;

export const AuditQuery = Type.Object(
  {
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: AUDIT_PAGE_SIZE_DEFAULT })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'nextCursor of the previous page (opaque)' })),
    actorId: Type.Optional(Text(100, 'Entries whose actor is this user id')),
    targetId: Type.Optional(Text(100, 'Entries about this record (a user, role, permission or order id)')),
    action: Type.Optional(Text(100, 'A prefix of the action: `user.` matches user.created, user.roles.changed, ...')),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Happened at or after (ISO 8601)' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Happened before (ISO 8601)' })),
  },
  { additionalProperties: false },
);

const FieldChange = Type.Object(
  {
    field: Type.String(),
    before: Type.Optional(Type.Unknown({ description: 'The value before (absent: unknown or not applicable)' })),
    after: Type.Optional(Type.Unknown({ description: 'The value after' })),
    redacted: Type.Optional(Type.Boolean({ description: 'A secret field: that it changed, never its value' })),
  },
  { additionalProperties: false },
);

export const AuditEvent = Type.Object(
  {
    id: Uuid,
    seq: Type.Integer({ description: 'Position in the hash chain' }),
    occurredAt: Timestamp,
    recordedAt: Timestamp,
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('user'), Type.Literal('system'), Type.Literal('anonymous')]),
        id: Nullable(Type.String()),
        email: Nullable(Type.String({ description: 'The email when the entry was recorded' })),
      },
      { additionalProperties: false },
    ),
    action: Type.String({ description: 'user.created, user.roles.changed, role.permission.granted, password.reset.requested, order.placed, ...' }),
    target: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    changes: Type.Array(FieldChange),
    traceId: Nullable(Type.String()),
    clientIp: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    eventId: Type.String(),
    prevHash: Type.String({ description: 'Hex SHA-256 of the previous entry' }),
    hash: Type.String({ description: 'Hex SHA-256 of this entry (content and prevHash)' }),
  },
  { additionalProperties: false },
);

export const AuditPage = Type.Object(
  {
    items: Type.Array(AuditEvent, { description: 'Newest first' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next (older) page; null on the last page' }),
  },
  { additionalProperties: false },
);

export const ChainReport = Type.Object(
  {
    ok: Type.Boolean({ description: 'false when an entry was altered, removed or reordered, or the chain no longer reaches or matches a signed checkpoint' }),
    checked: Type.Integer({ description: 'Entries checked' }),
    firstSeq: Type.Integer({ description: 'The first retained entry (older ones removed by retention)' }),
    brokenAtSeq: Type.Union([Type.Integer(), Type.Null()], { description: 'The first entry found altered, missing or out of place' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'What is wrong, naming the entries and the signed checkpoint that shows it' }),
    checkpoint: Type.Union(
      [
        Type.Object(
          { seq: Type.Integer(), hash: Type.String({ description: 'Hex SHA-256 of the entry at seq' }), signedAt: Timestamp },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The newest signed checkpoint (read from its stream, outside the audit database) the chain was held against; null before the first' },
    ),
    checkpointsChecked: Type.Integer({ description: 'Signed checkpoints that matched their entry' }),
    checkpointsRejected: Type.Integer({ description: 'Checkpoints left out: signed by another key, or not validly signed' }),
    unsignedEntries: Type.Integer({ description: 'Entries after the newest checkpoint: no signature covers them yet' }),
    keyId: Type.String({ description: 'Id of the checkpoint signing key' }),
    publicKey: Type.String({ description: 'The Ed25519 public key the checkpoints verify with: base64 of its 32 bytes' }),
  },
  { additionalProperties: false },
);

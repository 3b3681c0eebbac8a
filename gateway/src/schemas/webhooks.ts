/**
 * The webhooks API's schemas (issue #38). Bodies reject unknown fields; the resource never
 * carries a signing secret: `secret` appears only in the answers of create and rotate.
 */
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_TYPE } from '@iam/contracts';
import { type TSchema, Type } from '@sinclair/typebox';
import { NullableTimestamp, Page, PageSize, Timestamp, Uuid } from './common';

const SUBSCRIBABLE = WEBHOOK_EVENT_TYPES.map((t) => t.type).filter((t) => t !== WEBHOOK_TEST_TYPE);

export const WebhookParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const MessageId = Type.String({ pattern: '^msg_[0-9a-f]{32}$', description: 'A webhook-id (msg_ and 32 hex digits)' });
export const WebhookMessageParams = Type.Object({ id: Uuid, messageId: MessageId }, { additionalProperties: false });

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Where deliveries are POSTed: https, no credentials, no fragment. Its host must resolve to public addresses only (checked here and again at every connection; WEBHOOK_ALLOW_PRIVATE=true lifts that for development)',
});
const Description = Type.String({ maxLength: 500 });
const EventTypes = Type.Array(Type.Union(SUBSCRIBABLE.map((t) => Type.Literal(t))), {
  maxItems: 100,
  description: 'Public event types to receive (GET /api/v1/webhooks/event-types); empty: every type',
});

export const WebhookEndpoint = Type.Object(
  {
    id: Uuid,
    url: Type.String(),
    description: Type.String(),
    eventTypes: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: Type.Union([Type.Literal(''), Type.Literal('gone'), Type.Literal('failing')], {
      description: "Why the platform disabled it: gone (the receiver answered 410), failing (every attempt failed for WEBHOOK_DISABLE_AFTER_HOURS); '' otherwise",
    }),
    publicKey: Type.Union([Type.String(), Type.Null()], { description: 'The Ed25519 public key (whpk_…) verifying the v1a signatures, when the endpoint has one' }),
    pending: Type.Integer({ description: 'Messages waiting for delivery (retries included)' }),
    deadLetters: Type.Integer({ description: 'Messages whose schedule ran out (replayable)' }),
    failingSince: NullableTimestamp,
    previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], { description: 'While a rotated-out secret still signs: until when' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  { additionalProperties: false },
);

export const WebhookEndpointWithSecret = Type.Object(
  { ...WebhookEndpoint.properties, secret: Type.String({ description: 'whsec_…: the signing secret, in this answer only' }) },
  { additionalProperties: false },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    ed25519: Type.Optional(Type.Boolean({ default: false, description: 'Sign with an Ed25519 key too (v1a), beside the secret (v1)' })),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), description: Type.Optional(Description), eventTypes: Type.Optional(EventTypes), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const WebhookQuery = Type.Object(
  {
    page: Type.Optional(Page),
    pageSize: Type.Optional(PageSize),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the URL or description' })),
    includeDeleted: Type.Optional(Type.Boolean({ default: false })),
    id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const WebhookMessage = Type.Object(
  {
    id: MessageId,
    eventType: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')]),
    attempts: Type.Integer(),
    occurredAt: Timestamp,
    nextAttemptAt: NullableTimestamp,
    deliveredAt: NullableTimestamp,
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.String(),
    payload: Type.String({ description: 'The body every attempt sends: {type, timestamp, data}' }),
  },
  { additionalProperties: false },
);

export const MessageQuery = Type.Object(
  {
    page: Type.Optional(Page),
    pageSize: Type.Optional(PageSize),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead')])),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Events that occurred at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Events that occurred before' })),
  },
  { additionalProperties: false },
);

export const WebhookAttempt = Type.Object(
  {
    messageId: MessageId,
    eventType: Type.String(),
    attempt: Type.Integer(),
    startedAt: Timestamp,
    durationMs: Type.Integer(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    outcome: Type.Union(['delivered', 'failed', 'timeout', 'network', 'refused', 'redirect', 'gone'].map((o) => Type.Literal(o))),
    response: Type.String({ description: 'The first bytes of the response body' }),
    error: Type.String(),
  },
  { additionalProperties: false },
);

export const AttemptQuery = Type.Object(
  { page: Type.Optional(Page), pageSize: Type.Optional(PageSize), messageId: Type.Optional(MessageId) },
  { additionalProperties: false },
);

export const ReplayBody = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'Dead letters of events that occurred at or after' }),
    until: Type.String({ format: 'date-time', description: '... and before' }),
  },
  { additionalProperties: false },
);

export const EventTypeDoc = Type.Object(
  {
    type: Type.String(),
    version: Type.Integer(),
    description: Type.String(),
    schema: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'JSON Schema of data' }),
    example: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'An example payload: {type, timestamp, data}' }),
  },
  { additionalProperties: false },
);

/** The collection envelope of the messages and attempts (offset pages, exact counts). */
export const PlainPage = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), page: Type.Integer(), pageSize: Type.Integer(), totalCount: Type.Integer(), totalPages: Type.Integer() }, { additionalProperties: false });

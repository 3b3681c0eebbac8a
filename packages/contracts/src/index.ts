// Public surface of the contracts package: the generated code under src/gen (ts-proto, never
// edited by hand) and the hand-written event catalog that maps subjects to payload types.
export * as commerceV1 from './gen/commerce/v1/commerce';
export * as directoryV1 from './gen/directory/v1/directory';
export * as organizationsV1 from './gen/directory/v1/organizations';
export * as scimV1 from './gen/directory/v1/scim';
export * as identityV1 from './gen/identity/v1/identity';
export * as identityClientsV1 from './gen/identity/v1/clients';
export * as organizationTokensV1 from './gen/identity/v1/organization_tokens';
export * as identityProvidersV1 from './gen/identity/v1/identity_providers';
export * as notificationV1 from './gen/notification/v1/notification';
export * as webhooksV1 from './gen/notification/v1/webhooks';
export * as auditV1 from './gen/audit/v1/audit';
export * as healthV1 from './gen/grpc/health/v1/health';
export * as eventsV1 from './events';
export { STREAMS, SUBJECTS, decodeEvent, encodeEvent } from './events';
export type { EventPayload, EventSubject, StreamSpec } from './events';
export { DESCRIPTOR_SET_BASE64 } from './gen/descriptor-set';
export * as webhookCatalog from './webhooks';
export { WEBHOOK_EVENT_TYPES, WEBHOOK_SOURCE_SUBJECTS, WEBHOOK_TEST_TYPE, WEBHOOK_TYPE_NAMES, webhookBody, webhookEventOf } from './webhooks';
export type { FieldChange, WebhookEventType } from './webhooks';

export { WEBHOOK_EVENT_TYPES, WEBHOOK_SOURCE_SUBJECTS, WEBHOOK_TEST_TYPE, WEBHOOK_TYPE_NAMES, webhookBody, webhookEventOf } from './catalog';
export type { FieldChange, JsonSchema, WebhookEventType } from './catalog';
export { catalogMarkdown, withCatalog } from './docs';

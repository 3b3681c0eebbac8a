/**
 * The public webhook event catalog: the one source of every type an endpoint can receive, its
 * version, the internal event it is made from, the JSON Schema of its `data` and an example. The
 * notification service publishes from it, the gateway validates subscriptions against it and
 * lists it (`GET /api/v1/webhooks/event-types`), and the README's table is generated from it
 * (`make webhooks-docs`; `make webhooks-docs-check` fails when the README is stale).
 *
 * A payload is `{type, timestamp, data}` (Standard Webhooks): `timestamp` is when the event
 * occurred (ISO 8601), `data` what the type's schema says. It never holds a secret, a password
 * hash, a raw token or a code; it states the same facts as the audit trail's entry for the event.
 */
import type { EventSubject } from '../events';
import { COMMERCE_TYPES } from './commerce';
import { DIRECTORY_TYPES } from './directory';
import { FEDERATION_TYPES } from './federation';
import { IDENTITY_TYPES } from './identity';
import { ORGANIZATION_TYPES } from './organizations';
import { obj, str, uuid } from './schema';
import type { CatalogEntry, WebhookEventType } from './types';

/** The type an endpoint receives when its test is asked for (POST /api/v1/webhooks/{id}/test). */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

const TEST: CatalogEntry = {
  type: WEBHOOK_TEST_TYPE,
  version: 1,
  description: 'Sent on request (`POST /api/v1/webhooks/{id}/test`) to the one endpoint, whatever it subscribes to.',
  schema: obj({ endpointId: uuid(), message: str() }),
  example: { endpointId: '0e1d2c3b-4a59-4867-9a1b-2c3d4e5f6a7b', message: 'This is a test delivery from IAM.' },
};

const ENTRIES: readonly CatalogEntry[] = [...DIRECTORY_TYPES, ...ORGANIZATION_TYPES, ...IDENTITY_TYPES, ...FEDERATION_TYPES, ...COMMERCE_TYPES, TEST];

/** Every public type, in the catalog's order (what the README lists). */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ENTRIES.map(({ toData: _, ...t }) => t);

/** The public type names. */
export const WEBHOOK_TYPE_NAMES: ReadonlySet<string> = new Set(ENTRIES.map((e) => e.type));

const BY_SUBJECT = new Map<string, CatalogEntry>(ENTRIES.filter((e) => e.subject).map((e) => [e.subject!, e]));

/** The internal subjects that make a public type. */
export const WEBHOOK_SOURCE_SUBJECTS: readonly EventSubject[] = [...BY_SUBJECT.keys()] as EventSubject[];

/** What an internal event publishes: its public type and `data`; null when it publishes nothing. */
export function webhookEventOf(subject: string, payload: Uint8Array): { type: string; version: number; data: Record<string, unknown> } | null {
  const entry = BY_SUBJECT.get(subject);
  if (!entry?.toData) return null;
  const data = entry.toData(payload);
  return data ? { type: entry.type, version: entry.version, data } : null;
}

/** The serialized body of a message: `{type, timestamp, data}`, minified (what is signed and sent). */
export function webhookBody(type: string, timestamp: Date, data: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ type, timestamp: timestamp.toISOString(), data });
}

export type { WebhookEventType } from './types';
export type { FieldChange } from './changes';
export type { JsonSchema } from './schema';

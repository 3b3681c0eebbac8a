/** Outgoing webhooks: what the use cases and the dispatcher see, and the stores they need. */
import type { Outcome } from './delivery-policy';

export type DisabledReason = '' | 'gone' | 'failing';

export interface EndpointSettings {
  readonly url: string;
  readonly description: string;
  /** Public event types; empty: every type. */
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
  readonly ed25519: boolean;
}

export interface WebhookEndpoint extends EndpointSettings {
  readonly id: string;
  readonly disabledReason: DisabledReason;
  /** whpk_… when the endpoint signs v1a too; '' otherwise. */
  readonly publicKey: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly deletedAt: Date | null;
  readonly previousExpiresAt: Date | null;
  readonly failingSince: Date | null;
  readonly pending: number;
  readonly dead: number;
}

export type MessageStatus = 'pending' | 'delivered' | 'dead';

export interface WebhookMessage {
  /** The webhook-id (msg_ + the event id's 32 hex digits). */
  readonly id: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly status: MessageStatus;
  /** Attempts so far, replays included. */
  readonly attempts: number;
  readonly occurredAt: Date;
  readonly nextAttemptAt: Date | null;
  readonly deliveredAt: Date | null;
  readonly payload: string;
  readonly lastStatusCode: number | null;
  readonly lastError: string;
}

export interface WebhookAttempt {
  readonly messageId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly outcome: Outcome;
  readonly response: string;
  readonly error: string;
}

/** A message id as receivers see it: `msg_` + the 32 hex digits of the event id. */
export function webhookId(eventId: string): string {
  return `msg_${eventId.replace(/-/g, '').toLowerCase()}`;
}

/** The event id of a webhook-id, or undefined when it is not one. */
export function eventIdOf(messageId: string): string | undefined {
  const m = /^msg_([0-9a-f]{32})$/.exec(messageId);
  if (!m) return undefined;
  const h = m[1]!;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An event to queue for every endpoint that subscribes to its type. */
export interface QueuedEvent {
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: Date;
  /** The body: `{type, timestamp, data}` as sent. */
  readonly payload: string;
}

export interface Page<T> {
  readonly items: T[];
  readonly totalCount: number;
}

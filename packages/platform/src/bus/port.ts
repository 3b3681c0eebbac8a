/**
 * The event-bus port. Two adapters implement it: JetStream (production, every service its own
 * process) and in-process (the all-in-one mode). Both pass the same contract suite
 * (platform/src/testing/bus-contract.ts).
 */
import type { StreamSpec } from '@iam/contracts';
import { type Attributes, SpanKind, context } from '@opentelemetry/api';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { extractContext, failSpan, injectContext, startSpan } from '../trace';

export type { StreamSpec } from '@iam/contracts';

/** An event as the outbox relay hands it to the bus. */
export interface OutgoingEvent {
  /** Event id: the deduplication key (Nats-Msg-Id). */
  readonly id: string;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly occurredAt: Date;
  /**
   * W3C traceparent. Outgoing: the work that produced the event (the outbox row's), parent of
   * the publish span; incoming: the publish span, parent of the handler's span.
   */
  readonly traceparent?: string;
  /** Extra headers (dead letters carry the original subject, id, error and delivery count). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An event as a handler receives it. */
export interface IncomingEvent extends OutgoingEvent {
  /** 1 on the first delivery. */
  readonly deliveryCount: number;
}

export type EventHandler = (event: IncomingEvent) => Promise<void>;

/** Thrown by a handler for an event that can never succeed: it is dead-lettered at once. */
export class PermanentEventError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentEventError';
  }
}

/**
 * Thrown by a handler that cannot decide yet, because another attempt at the same work may still
 * be running (a mail whose sending another process began): the event comes again after `delayMs`
 * instead of the consumer's backoff. It counts as a delivery like any retry, so after the last one
 * it is dead-lettered.
 */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}

export interface DurableConsumerSpec {
  /** Durable name, shared by every replica of the consuming service (work is split among them). */
  readonly name: string;
  readonly stream: StreamSpec;
  /** Subjects inside the stream (NATS wildcards allowed). */
  readonly subjects: readonly string[];
  readonly handler: EventHandler;
  /** Deliveries before the event goes to the dead-letter subject (default 5). */
  readonly maxDeliver?: number;
  /** Delay before redelivery n (ms); the last value repeats (default 1 s, 5 s, 30 s, 2 min). */
  readonly backoffMs?: readonly number[];
  /** Handlers running at once (default 8). */
  readonly concurrency?: number;
  /**
   * Deliveries unacknowledged at once across every replica (JetStream's max_ack_pending, default
   * 1000). 1 = one event at a time in stream order, however many replicas consume (the audit
   * trail's before/after needs it); an event being retried then holds the ones behind it.
   */
  readonly maxAckPending?: number;
  /** The consuming service (an attribute of the handler's spans). */
  readonly service?: string;
  /**
   * Where deliveries are counted (`events_consumed_total`): the consuming service's metrics, so a
   * bus shared by several services in one process counts each in its own registry. Default: the
   * bus's own metrics, if it has any.
   */
  readonly metrics?: Metrics;
}

/** How a broadcast subscriber learns whether it may have missed events (a cache flushes then). */
export interface BroadcastOptions {
  /**
   * `true` once the subscription receives every event published from now on; `false` as soon
   * as events may be missed (the connection dropped). After a `false`, the next `true` follows a
   * gap: whatever was derived from earlier events may be stale.
   */
  readonly onLive?: (live: boolean) => void;
}

export interface Subscription {
  /** Stops taking new events and waits for running handlers. */
  stop(): Promise<void>;
}

export interface EventBus {
  readonly kind: 'jetstream' | 'memory';
  /** Creates or updates the streams (idempotent; called at bootstrap by every process that uses them). */
  declareStreams(streams: readonly StreamSpec[]): Promise<void>;
  /** Stores the event durably; resolves once the bus acknowledged it. A repeated id is stored once. */
  publish(event: OutgoingEvent): Promise<void>;
  /**
   * Durable, at-least-once delivery with explicit ack: a handler that resolves acks; one that
   * throws is retried with backoff (a RetryLaterError: after its own delay); after the last
   * delivery (or a PermanentEventError) the event is
   * published to `dead.<consumer name>` and dropped from the consumer.
   */
  consume(spec: DurableConsumerSpec): Subscription;
  /**
   * The events `stream` holds now, oldest first: the newest `limit` of them (default every one).
   * For reading a stream's record (the audit trail's signed checkpoints), not for work, which is
   * `consume`'s. A stream that was never declared or is empty gives []. Throws when the bus
   * cannot be reached.
   */
  read(stream: StreamSpec, opts?: { readonly limit?: number }): Promise<IncomingEvent[]>;
  /** Every instance receives every event, at most once, from now on (cache invalidation). */
  subscribe(subjects: readonly string[], handler: EventHandler, opts?: BroadcastOptions): Subscription;
  /**
   * Calls `listener` each time the bus has its broker again after losing it (a reconnect, or the
   * first connection of a bus that started while the broker was down), once publishing works
   * again: work held back meanwhile (an outbox relay in its retry backoff) goes at once instead of
   * at its next try. Returns a function that removes the listener. The in-process bus has no
   * broker to lose and never calls it.
   */
  onReconnect(listener: () => void): () => void;
  /**
   * Events a durable consumer has yet to finish: not yet delivered to it, or delivered and not
   * yet acknowledged (its lag). Throws when the bus cannot say (the broker is unreachable).
   */
  consumerBacklog(consumer: Pick<DurableConsumerSpec, 'name' | 'stream'>): Promise<number>;
  /** Throws when the bus cannot be used right now (readiness). */
  check(): Promise<void>;
  /** Stops consumers, flushes and disconnects. */
  close(): Promise<void>;
}

export const DEFAULT_BACKOFF_MS = [1_000, 5_000, 30_000, 120_000] as const;

/** What a bus span says about where the message went. */
export interface BusSpanInfo {
  /** `messaging.system`: `nats` (JetStream) or `memory` (in-process). */
  readonly system: 'nats' | 'memory';
  /** Durable consumer name (absent for broadcast subscriptions). */
  readonly consumer?: string;
  readonly service?: string;
}

function messagingAttributes(event: OutgoingEvent, info: BusSpanInfo, operation: 'send' | 'process'): Attributes {
  return {
    'messaging.system': info.system,
    'messaging.operation.type': operation,
    'messaging.destination.name': event.subject,
    'messaging.message.id': event.id,
    ...(info.consumer ? { 'messaging.consumer.group.name': info.consumer } : {}),
    ...(info.service ? { 'iam.service': info.service } : {}),
  };
}

/**
 * Publishes inside a producer span, child of the event's traceparent (the work that produced it)
 * or else of the active span; `send` gets the traceparent to put in the message's headers.
 */
export async function publishInTrace(event: OutgoingEvent, info: BusSpanInfo, send: (traceparent: string | undefined) => Promise<void>): Promise<void> {
  const parent = event.traceparent ? extractContext((name) => (name === 'traceparent' ? event.traceparent : undefined)) : context.active();
  const { span, ctx } = startSpan(`publish ${event.subject}`, { kind: SpanKind.PRODUCER, attributes: messagingAttributes(event, info, 'send') }, parent);
  let traceparent: string | undefined;
  injectContext((name, value) => {
    if (name === 'traceparent') traceparent = value;
  }, ctx);
  try {
    await context.with(ctx, () => send(traceparent));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Runs a handler in a consumer span continuing the trace of the event (its traceparent header). */
export async function handleInTrace(handler: EventHandler, event: IncomingEvent, info: BusSpanInfo = { system: 'memory' }): Promise<void> {
  const parent = extractContext((name) => (name === 'traceparent' ? event.traceparent : undefined));
  const attributes = { ...messagingAttributes(event, info, 'process'), 'iam.delivery_count': event.deliveryCount };
  const { span, ctx } = startSpan(`process ${event.subject}`, { kind: SpanKind.CONSUMER, attributes }, parent);
  try {
    await context.with(ctx, () => handler(event));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export function backoffFor(spec: DurableConsumerSpec, deliveryCount: number): number {
  const list = spec.backoffMs ?? DEFAULT_BACKOFF_MS;
  return list[Math.min(deliveryCount - 1, list.length - 1)] ?? 1_000;
}

/**
 * The redelivery of an event whose handler threw `err` (not for the last time): when, and how it
 * is logged (a handler that asked to be called later did not fail).
 */
export function retryOf(spec: DurableConsumerSpec, event: IncomingEvent, err: unknown, logger: Logger): number {
  const fields = { err, subject: event.subject, eventId: event.id, deliveries: event.deliveryCount };
  if (err instanceof RetryLaterError) {
    logger.info({ ...fields, retryInMs: err.delayMs }, 'event handler asked to be called later');
    return err.delayMs;
  }
  logger.warn(fields, 'event handler failed; will retry');
  return backoffFor(spec, event.deliveryCount);
}

export function deadLetterSubject(consumerName: string): string {
  return `dead.${consumerName}`;
}

/** The dead letter of `event`: same data, a derived id, and headers saying what happened. */
export function deadLetterOf(consumerName: string, event: OutgoingEvent, err: unknown, deliveries: number): OutgoingEvent {
  const message = err instanceof Error ? err.message : String(err);
  return {
    id: `dead:${consumerName}:${event.id}`,
    subject: deadLetterSubject(consumerName),
    data: event.data,
    occurredAt: new Date(),
    traceparent: event.traceparent,
    headers: {
      'Iam-Original-Subject': event.subject,
      'Iam-Original-Id': event.id,
      'Iam-Deliveries': String(deliveries),
      'Iam-Error': message.replace(/[\r\n]+/g, ' ').slice(0, 500),
    },
  };
}

/** NATS subject matching: `*` matches one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Bounded concurrency for handlers. */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
  }

  /** Resolves when nothing is running. */
  async idle(): Promise<void> {
    while (this.active > 0) await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The event bus as an informational check: its state shows in health details and, for NATS, in
 * the `nats_connected` gauge; it never decides readiness.
 */
export function busCheck(bus: EventBus, metrics: Metrics): () => Promise<void> {
  return async () => {
    try {
      await bus.check();
      if (bus.kind === 'jetstream') metrics.natsConnected.set(1);
    } catch (err) {
      if (bus.kind === 'jetstream') metrics.natsConnected.set(0);
      throw err;
    }
  };
}

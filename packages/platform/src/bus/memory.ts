/**
 * In-process event bus for the all-in-one mode: the same semantics as the JetStream adapter
 * (dedup by id, durable consumers resuming where they stopped, redelivery with backoff, dead
 * letters), kept in memory. Events that were published but not yet handled are lost if the
 * process dies; the outbox keeps everything up to the publish.
 */
import type { StreamSpec } from '@iam/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import {
  deadLetterOf,
  handleInTrace,
  type DurableConsumerSpec,
  type EventBus,
  type BroadcastOptions,
  type EventHandler,
  type IncomingEvent,
  type OutgoingEvent,
  PermanentEventError,
  publishInTrace,
  retryOf,
  Semaphore,
  type Subscription,
  subjectMatches,
} from './port';

const DEDUP_WINDOW_MS = 2 * 60_000;
const MAX_STREAM_EVENTS = 10_000;

interface Stored {
  seq: number;
  event: OutgoingEvent;
}

interface Member {
  spec: DurableConsumerSpec;
  running: boolean;
  sem: Semaphore;
}

/** A durable consumer: its position survives restarts of its members (replicas share the work). */
interface Durable {
  name: string;
  stream: string;
  subjects: readonly string[];
  /** Highest sequence handed out. */
  cursor: number;
  members: Member[];
  next: number;
  /** Events waiting for a running member. */
  parked: Array<{ event: OutgoingEvent; deliveryCount: number }>;
  timers: Set<NodeJS.Timeout>;
  inFlight: Set<Promise<void>>;
  /** maxAckPending: events between delivery and ack or dead letter, across members (retries hold theirs). */
  gate?: Semaphore;
}

export class InMemoryEventBus implements EventBus {
  readonly kind = 'memory' as const;
  private readonly streams = new Map<string, { spec: StreamSpec; events: Stored[] }>();
  private readonly seen = new Map<string, number>();
  private readonly durables = new Map<string, Durable>();
  private readonly broadcasts = new Set<{ subjects: readonly string[]; handler: EventHandler }>();
  private seq = 0;
  private closed = false;

  /** `metrics`: counts deliveries of consumers whose spec names no metrics of its own. */
  constructor(private readonly deps: { logger: Logger; metrics?: Metrics }) {}

  async declareStreams(streams: readonly StreamSpec[]): Promise<void> {
    for (const spec of streams) if (!this.streams.has(spec.name)) this.streams.set(spec.name, { spec, events: [] });
  }

  async publish(event: OutgoingEvent): Promise<void> {
    if (this.closed) throw new Error('event bus is closed');
    await publishInTrace(event, { system: 'memory' }, async (traceparent) => this.store({ ...event, traceparent }));
  }

  private store(event: OutgoingEvent): void {
    const now = Date.now();
    for (const [id, at] of this.seen) if (now - at > DEDUP_WINDOW_MS) this.seen.delete(id);
    if (this.seen.has(event.id)) return;
    const stream = [...this.streams.values()].find((s) => s.spec.subjects.some((p) => subjectMatches(p, event.subject)));
    if (!stream) throw new Error(`no stream stores subject ${event.subject}`);
    this.seen.set(event.id, now);
    stream.events.push({ seq: ++this.seq, event });
    if (stream.events.length > MAX_STREAM_EVENTS) stream.events.splice(0, stream.events.length - MAX_STREAM_EVENTS);
    for (const b of this.broadcasts) {
      if (b.subjects.some((p) => subjectMatches(p, event.subject))) {
        queueMicrotask(() =>
          handleInTrace(b.handler, { ...event, deliveryCount: 1 }, { system: 'memory' }).catch((err: unknown) =>
            this.deps.logger.warn({ err, subject: event.subject }, 'broadcast handler failed'),
          ),
        );
      }
    }
    for (const d of this.durables.values()) if (d.stream === stream.spec.name) this.pump(d);
  }

  consume(spec: DurableConsumerSpec): Subscription {
    let d = this.durables.get(spec.name);
    if (!d) {
      d = { name: spec.name, stream: spec.stream.name, subjects: spec.subjects, cursor: 0, members: [], next: 0, parked: [], timers: new Set(), inFlight: new Set() };
      this.durables.set(spec.name, d);
    }
    const durable = d;
    // As JetStream's update: the newest start decides what the shared consumer reads.
    durable.subjects = spec.subjects;
    if (spec.maxAckPending) durable.gate ??= new Semaphore(spec.maxAckPending);
    const member: Member = { spec, running: true, sem: new Semaphore(spec.concurrency ?? 8) };
    durable.members.push(member);
    for (const p of durable.parked.splice(0)) this.deliver(durable, p.event, p.deliveryCount);
    this.pump(durable);
    return {
      stop: async () => {
        member.running = false;
        durable.members = durable.members.filter((m) => m !== member);
        await Promise.allSettled([...durable.inFlight]);
      },
    };
  }

  async read(spec: StreamSpec, opts: { readonly limit?: number } = {}): Promise<IncomingEvent[]> {
    if (this.closed) throw new Error('event bus is closed');
    const events = this.streams.get(spec.name)?.events ?? [];
    const from = opts.limit === undefined ? 0 : Math.max(0, events.length - opts.limit);
    return events.slice(from).map(({ event }) => ({ ...event, deliveryCount: 1 }));
  }

  subscribe(subjects: readonly string[], handler: EventHandler, opts?: BroadcastOptions): Subscription {
    const entry = { subjects, handler };
    this.broadcasts.add(entry);
    // In process nothing is ever missed: live at once, for good.
    opts?.onLive?.(true);
    return { stop: async () => void this.broadcasts.delete(entry) };
  }

  onReconnect(): () => void {
    // In process there is no connection to lose: never called.
    return () => undefined;
  }

  async consumerBacklog(consumer: Pick<DurableConsumerSpec, 'name' | 'stream'>): Promise<number> {
    const d = this.durables.get(consumer.name);
    const events = this.streams.get(consumer.stream.name)?.events ?? [];
    if (!d) return events.length;
    const undelivered = events.filter((e) => e.seq > d.cursor && d.subjects.some((p) => subjectMatches(p, e.event.subject))).length;
    return undelivered + d.parked.length + d.inFlight.size;
  }

  async check(): Promise<void> {
    if (this.closed) throw new Error('event bus is closed');
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.durables.values()].map(async (d) => {
      for (const m of d.members) m.running = false;
      d.members = [];
      for (const t of d.timers) clearTimeout(t);
      await Promise.allSettled([...d.inFlight]);
    }));
    this.broadcasts.clear();
  }

  /** Hands every not-yet-delivered matching event to the consumer. */
  private pump(d: Durable): void {
    if (d.members.length === 0) return;
    const stream = this.streams.get(d.stream);
    if (!stream) return;
    for (const stored of stream.events) {
      if (stored.seq <= d.cursor) continue;
      d.cursor = stored.seq;
      if (d.subjects.some((p) => subjectMatches(p, stored.event.subject))) this.deliver(d, stored.event, 1);
    }
  }

  private pick(d: Durable): Member | undefined {
    const running = d.members.filter((m) => m.running);
    if (running.length === 0) return undefined;
    d.next = (d.next + 1) % running.length;
    return running[d.next];
  }

  /** `gateHeld`: a redelivery of an event that still holds its place under maxAckPending. */
  private deliver(d: Durable, event: OutgoingEvent, deliveryCount: number, gateHeld = false): void {
    const member = this.pick(d);
    if (!member) {
      if (gateHeld) d.gate?.release();
      d.parked.push({ event, deliveryCount });
      return;
    }
    const spec = member.spec;
    const consumed = (spec.metrics ?? this.deps.metrics)?.eventsConsumed;
    const run = (async () => {
      if (!gateHeld) await d.gate?.acquire();
      // Released once the event is acked or dead-lettered; a retry keeps it (JetStream counts a
      // nak'd event as pending until then).
      let keepGate = false;
      await member.sem.acquire();
      try {
        if (!member.running) {
          keepGate = true;
          this.deliver(d, event, deliveryCount, d.gate !== undefined);
          return;
        }
        const incoming: IncomingEvent = { ...event, deliveryCount };
        await handleInTrace(spec.handler, incoming, { system: 'memory', consumer: d.name, service: spec.service });
        consumed?.inc({ consumer: d.name, subject: event.subject, outcome: 'ack' });
      } catch (err) {
        const max = spec.maxDeliver ?? 5;
        if (err instanceof PermanentEventError || deliveryCount >= max) {
          consumed?.inc({ consumer: d.name, subject: event.subject, outcome: 'dead_letter' });
          this.deps.logger.error({ err, subject: event.subject, eventId: event.id, deliveryCount }, 'event dead-lettered');
          await this.publishDeadLetter(d.name, event, err, deliveryCount);
        } else {
          consumed?.inc({ consumer: d.name, subject: event.subject, outcome: 'retry' });
          keepGate = d.gate !== undefined;
          this.retryLater(d, event, deliveryCount + 1, retryOf(spec, { ...event, deliveryCount }, err, this.deps.logger), keepGate);
        }
      } finally {
        member.sem.release();
        if (!keepGate) d.gate?.release();
      }
    })();
    d.inFlight.add(run);
    void run.finally(() => d.inFlight.delete(run));
  }

  private retryLater(d: Durable, event: OutgoingEvent, deliveryCount: number, delayMs: number, gateHeld: boolean): void {
    const t = setTimeout(() => {
      d.timers.delete(t);
      this.deliver(d, event, deliveryCount, gateHeld);
    }, delayMs);
    d.timers.add(t);
  }

  private async publishDeadLetter(consumer: string, event: OutgoingEvent, err: unknown, deliveries: number): Promise<void> {
    const dead = deadLetterOf(consumer, event, err, deliveries);
    const hasStream = [...this.streams.values()].some((s) => s.spec.subjects.some((p) => subjectMatches(p, dead.subject)));
    if (!hasStream) {
      this.deps.logger.error({ subject: dead.subject }, 'no dead-letter stream declared; dead letter dropped');
      return;
    }
    await this.publish(dead).catch((e: unknown) => this.deps.logger.error({ err: e }, 'dead-letter publish failed'));
  }
}

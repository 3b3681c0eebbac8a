/**
 * NATS JetStream adapter. Streams and durable consumers are declared at bootstrap (and again
 * after a reconnect); publishes carry `Nats-Msg-Id` = event id so the stream drops duplicates;
 * consumers ack explicitly after the handler succeeds, nak with a delay on failure, and after
 * the last delivery publish the event to `dead.<consumer>` and `term` it.
 *
 * The connection is made in the background and retried forever: a process starts (and reports
 * not-ready) while NATS is down, and recovers without a restart when it comes back; the
 * connection's reconnect (status) events tell `onReconnect` listeners at once.
 */
import type { StreamSpec } from '@iam/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
} from '@nats-io/jetstream';
import { credsAuthenticator, headers as natsHeaders, type MsgHdrs, type NatsConnection, nanos, nkeyAuthenticator } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { withTimeout } from '../health';
import type { Logger } from '../logger';
import type { NatsConnectionConfig } from '../runtime';
import type { Metrics } from '../metrics';
import {
  backoffFor,
  deadLetterOf,
  handleInTrace,
  type BroadcastOptions,
  type DurableConsumerSpec,
  type EventBus,
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

export interface JetStreamBusOptions {
  readonly url: string;
  /** Connection name shown by the server (process name). */
  readonly name: string;
  readonly logger: Logger;
  /** Counts deliveries of consumers whose spec names no metrics of its own. */
  readonly metrics?: Metrics;
  /**
   * Prefix for every subject and stream name (empty in production). Tests use it to get a
   * private namespace on a shared server.
   */
  readonly namespace?: string;
  /** How long publish waits for a connection and the stream's ack, and read for a connection (ms, default 3000). */
  readonly publishTimeoutMs?: number;
  /** Credentials, CA and stream replicas (readRuntimeConfig's `nats`); none = anonymous, 1 replica. */
  readonly connection?: NatsConnectionConfig;
}

const OCCURRED_AT = 'Iam-Occurred-At';
const MSG_ID = 'Nats-Msg-Id';

interface Conn {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

export class JetStreamEventBus implements EventBus {
  readonly kind = 'jetstream' as const;
  private conn: Conn | undefined;
  private connecting: Promise<Conn> | undefined;
  private connected = false;
  private closed = false;
  private readonly declared = new Map<string, StreamSpec>();
  private readonly subs = new Set<Subscription>();
  /** Broadcast subscribers that want to know when events may have been missed. */
  private readonly liveListeners = new Set<(live: boolean) => void>();
  /** Told when publishing works again after the connection was lost (onReconnect). */
  private readonly reconnectListeners = new Set<() => void>();
  private readonly subjectPrefix: string;
  private readonly streamPrefix: string;

  constructor(private readonly opts: JetStreamBusOptions) {
    const ns = opts.namespace ?? '';
    this.subjectPrefix = ns ? `${ns}.` : '';
    this.streamPrefix = ns ? `${ns.replace(/[^A-Za-z0-9_-]/g, '_').toUpperCase()}_` : '';
    void this.connection().catch(() => undefined);
  }

  /** The namespace this bus lives in ('' in production). */
  get namespace(): string {
    return this.opts.namespace ?? '';
  }

  private subject(s: string): string {
    return this.subjectPrefix + s;
  }

  private unprefix(s: string): string {
    return this.subjectPrefix && s.startsWith(this.subjectPrefix) ? s.slice(this.subjectPrefix.length) : s;
  }

  private streamName(spec: StreamSpec): string {
    return this.streamPrefix + spec.name;
  }

  /** The live connection; made on first use, retried until it succeeds or the bus is closed. */
  private connection(): Promise<Conn> {
    if (this.conn && !this.conn.nc.isClosed()) return Promise.resolve(this.conn);
    this.connecting ??= this.connectLoop().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connectLoop(): Promise<Conn> {
    let delay = 250;
    for (;;) {
      if (this.closed) throw new Error('event bus is closed');
      try {
        const c = this.opts.connection;
        const nc = await connect({
          servers: this.opts.url,
          name: this.opts.name,
          ...(c?.creds ? { authenticator: credsAuthenticator(c.creds) } : c?.nkeySeed ? { authenticator: nkeyAuthenticator(c.nkeySeed) } : {}),
          ...(c?.user ? { user: c.user, pass: c.password } : {}),
          ...(c?.caFile ? { tls: { caFile: c.caFile } } : {}),
          maxReconnectAttempts: -1,
          // A retry every 250 ms (plus up to 100 ms of jitter) while NATS is away: back within about
          // a third of a second of its return, so the outboxes drain in under a second. A refused
          // connection costs next to nothing, even from many processes.
          reconnectTimeWait: 250,
          pingInterval: 10_000,
          timeout: 2_000,
        });
        const conn: Conn = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
        this.conn = conn;
        this.connected = true;
        this.opts.logger.info({ server: nc.getServer() }, 'connected to NATS');
        void this.watchStatus(nc);
        await this.redeclare(conn);
        this.reconnected();
        return conn;
      } catch (err) {
        this.connected = false;
        this.opts.logger.warn({ err: (err as Error).message }, 'NATS connection failed; retrying');
        await sleep(delay);
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        this.opts.logger.warn('disconnected from NATS');
        // Core-NATS broadcasts published while away are lost for good.
        for (const l of this.liveListeners) l(false);
      } else if (s.type === 'reconnect') {
        this.connected = true;
        this.opts.logger.info('reconnected to NATS');
        // The client re-sends its subscriptions on reconnect; once the server has them, broadcasts flow again.
        void nc.flush().then(
          () => {
            for (const l of this.liveListeners) l(true);
          },
          () => undefined,
        );
        // Streams first (a server that lost its store has them again), then whoever waits to publish.
        const redeclared = this.conn ? this.redeclare(this.conn).catch((err: unknown) => this.opts.logger.warn({ err }, 're-declaring streams failed')) : Promise.resolve();
        void redeclared.then(() => this.reconnected());
      }
    }
    this.connected = false;
  }

  private reconnected(): void {
    for (const l of this.reconnectListeners) {
      try {
        l();
      } catch (err) {
        this.opts.logger.warn({ err }, 'reconnect listener failed');
      }
    }
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => void this.reconnectListeners.delete(listener);
  }

  private async redeclare(conn: Conn): Promise<void> {
    for (const spec of this.declared.values()) await this.ensureStream(conn, spec);
  }

  async declareStreams(streams: readonly StreamSpec[]): Promise<void> {
    for (const s of streams) this.declared.set(s.name, s);
    const conn = await this.connection();
    for (const s of streams) await this.ensureStream(conn, s);
  }

  private async ensureStream(conn: Conn, spec: StreamSpec): Promise<void> {
    const name = this.streamName(spec);
    const config = {
      name,
      subjects: spec.subjects.map((s) => this.subject(s)),
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: nanos(spec.maxAgeSeconds * 1000),
      duplicate_window: nanos(120_000),
      num_replicas: this.opts.connection?.streamReplicas ?? 1,
    };
    try {
      const info = await conn.jsm.streams.info(name);
      const same = info.config.subjects?.join(',') === config.subjects.join(',') && info.config.max_age === config.max_age;
      if (!same) await conn.jsm.streams.update(name, { ...info.config, subjects: config.subjects, max_age: config.max_age });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await conn.jsm.streams.add(config);
      this.opts.logger.info({ stream: name }, 'stream created');
    }
  }

  async publish(event: OutgoingEvent): Promise<void> {
    const timeout = this.opts.publishTimeoutMs ?? 3_000;
    if (!this.connected) throw new Error('not connected to NATS');
    const conn = await this.connection();
    await publishInTrace(event, { system: 'nats' }, async (traceparent) => {
      const h = natsHeaders();
      h.set(OCCURRED_AT, event.occurredAt.toISOString());
      for (const [k, v] of Object.entries(event.headers ?? {})) h.set(k, v);
      if (traceparent) h.set('traceparent', traceparent);
      await conn.js.publish(this.subject(event.subject), event.data, { msgID: event.id, headers: h, timeout });
    });
  }

  consume(spec: DurableConsumerSpec): Subscription {
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const sem = new Semaphore(spec.concurrency ?? 8);
    const loop = (async () => {
      let delay = 500;
      while (!stopped) {
        try {
          const conn = await this.connection();
          await this.ensureStream(conn, spec.stream);
          await this.ensureConsumer(conn, spec);
          const consumer = await conn.js.consumers.get(this.streamName(spec.stream), spec.name);
          messages = await consumer.consume({ max_messages: Math.max(2 * (spec.concurrency ?? 8), 16) });
          delay = 500;
          for await (const m of messages) {
            await sem.acquire();
            void this.handle(spec, m).finally(() => sem.release());
            if (stopped) break;
          }
        } catch (err) {
          if (stopped || this.closed) break;
          this.opts.logger.warn({ err: (err as Error).message, consumer: spec.name }, 'consumer interrupted; restarting');
        }
        if (!stopped) {
          await sleep(delay);
          delay = Math.min(delay * 2, 5_000);
        }
      }
    })();
    const sub: Subscription = {
      stop: async () => {
        stopped = true;
        messages?.stop();
        await loop;
        await sem.idle();
        this.subs.delete(sub);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  private async ensureConsumer(conn: Conn, spec: DurableConsumerSpec): Promise<void> {
    const stream = this.streamName(spec.stream);
    const maxDeliver = spec.maxDeliver ?? 5;
    const filter = spec.subjects.map((s) => this.subject(s));
    const config = {
      durable_name: spec.name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // One delivery more than the handler budget: a crash during the last try still reaches the dead letter.
      max_deliver: maxDeliver + 1,
      // Unacknowledged (a consumer that died) → redelivered after this; handlers signal progress.
      ack_wait: nanos(15_000),
      max_ack_pending: spec.maxAckPending ?? 1_000,
      ...this.serverFilter(conn, filter),
    };
    try {
      await conn.jsm.consumers.info(stream, spec.name);
      await conn.jsm.consumers.update(stream, spec.name, {
        max_deliver: config.max_deliver,
        ack_wait: config.ack_wait,
        max_ack_pending: config.max_ack_pending,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await conn.jsm.consumers.add(stream, config);
      this.opts.logger.info({ stream, consumer: spec.name }, 'durable consumer created');
    }
  }

  /**
   * Several filter subjects need NATS 2.10 (`filter_subjects`); on an older server the consumer
   * takes the whole stream and `handle` acks what the spec does not ask for.
   */
  private serverFilter(conn: Conn, filter: string[]): { filter_subject?: string; filter_subjects?: string[] } {
    if (filter.length === 1) return { filter_subject: filter[0] };
    const [major = 0, minor = 0] = (conn.nc.info?.version ?? '0.0').split('.').map(Number);
    return major > 2 || (major === 2 && minor >= 10) ? { filter_subjects: filter } : {};
  }

  private async handle(spec: DurableConsumerSpec, m: JsMsg): Promise<void> {
    if (spec.subjects.length > 1 && !spec.subjects.some((p) => subjectMatches(p, this.unprefix(m.subject)))) {
      m.ack();
      return;
    }
    const event = this.incoming(m);
    const maxDeliver = spec.maxDeliver ?? 5;
    const consumed = (spec.metrics ?? this.opts.metrics)?.eventsConsumed;
    const working = setInterval(() => m.working(), 5_000);
    try {
      await handleInTrace(spec.handler, event, { system: 'nats', consumer: spec.name, service: spec.service });
      m.ack();
      consumed?.inc({ consumer: spec.name, subject: event.subject, outcome: 'ack' });
    } catch (err) {
      if (err instanceof PermanentEventError || event.deliveryCount >= maxDeliver) {
        try {
          await this.publish(deadLetterOf(spec.name, event, err, event.deliveryCount));
          m.term(err instanceof Error ? err.message.slice(0, 200) : 'failed');
          consumed?.inc({ consumer: spec.name, subject: event.subject, outcome: 'dead_letter' });
          this.opts.logger.error({ err, subject: event.subject, eventId: event.id, deliveries: event.deliveryCount }, 'event dead-lettered');
        } catch (dlqErr) {
          // The dead letter could not be stored: keep the event for another try.
          m.nak(backoffFor(spec, event.deliveryCount));
          this.opts.logger.error({ err: dlqErr, eventId: event.id }, 'dead-letter publish failed; event kept');
        }
      } else {
        m.nak(retryOf(spec, event, err, this.opts.logger));
        consumed?.inc({ consumer: spec.name, subject: event.subject, outcome: 'retry' });
      }
    } finally {
      clearInterval(working);
    }
  }

  private incoming(m: JsMsg): IncomingEvent {
    return {
      id: m.headers?.get(MSG_ID) || `${m.info.stream}:${m.seq}`,
      subject: this.unprefix(m.subject),
      data: m.data,
      occurredAt: parseDate(m.headers?.get(OCCURRED_AT)),
      traceparent: m.headers?.get('traceparent') || undefined,
      headers: headersToRecord(m.headers),
      deliveryCount: m.info.deliveryCount,
    };
  }

  /** Through an ordered (ephemeral) consumer from the first wanted sequence to the stream's last at the call. */
  async read(spec: StreamSpec, opts: { readonly limit?: number } = {}): Promise<IncomingEvent[]> {
    const conn = await withTimeout(this.connection(), this.opts.publishTimeoutMs ?? 3_000, 'NATS connection');
    const name = this.streamName(spec);
    let state: { messages: number; first_seq: number; last_seq: number };
    try {
      state = (await conn.jsm.streams.info(name)).state;
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
    if (state.messages === 0) return [];
    const start = Math.max(state.first_seq, state.last_seq - (opts.limit ?? state.messages) + 1);
    const consumer = await conn.js.consumers.get(name, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start });
    const out: IncomingEvent[] = [];
    try {
      for (let done = false; !done; ) {
        let got = 0;
        const batch = await consumer.fetch({ max_messages: Math.min(1_000, state.last_seq - start + 1), expires: 2_000 });
        for await (const m of batch) {
          got++;
          out.push({ ...this.incoming(m), deliveryCount: 1 });
          if (m.seq >= state.last_seq || m.info.pending === 0) {
            done = true;
            break;
          }
        }
        // Nothing more within the wait: the tail expired meanwhile (max_age).
        if (got === 0) done = true;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return out;
  }

  subscribe(subjects: readonly string[], handler: EventHandler, opts?: BroadcastOptions): Subscription {
    let stopped = false;
    const active: Array<{ unsubscribe(): void }> = [];
    const onLive = opts?.onLive;
    void (async () => {
      const conn = await this.connection();
      if (stopped) return;
      for (const s of subjects) {
        active.push(
          conn.nc.subscribe(this.subject(s), {
            callback: (err, msg) => {
              if (err) return;
              const event: IncomingEvent = {
                id: msg.headers?.get(MSG_ID) ?? '',
                subject: this.unprefix(msg.subject),
                data: msg.data,
                occurredAt: parseDate(msg.headers?.get(OCCURRED_AT)),
                traceparent: msg.headers?.get('traceparent') || undefined,
                headers: headersToRecord(msg.headers),
                deliveryCount: 1,
              };
              handleInTrace(handler, event, { system: 'nats' }).catch((e: unknown) => this.opts.logger.warn({ err: e, subject: event.subject }, 'broadcast handler failed'));
            },
          }),
        );
      }
      if (onLive) {
        // Live once the server has the subscriptions (a round trip), and again after every reconnect.
        await conn.nc.flush();
        if (stopped) return;
        this.liveListeners.add(onLive);
        onLive(this.connected);
      }
    })().catch(() => undefined);
    const sub: Subscription = {
      stop: async () => {
        stopped = true;
        if (onLive) this.liveListeners.delete(onLive);
        for (const a of active) a.unsubscribe();
        this.subs.delete(sub);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  async check(): Promise<void> {
    const conn = this.conn;
    if (!conn || !this.connected || conn.nc.isClosed()) throw new Error('not connected to NATS');
    await conn.nc.rtt();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subs].map((s) => s.stop()));
    const conn = this.conn;
    if (conn && !conn.nc.isClosed()) {
      await conn.nc.drain().catch(() => conn.nc.close());
    }
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { code?: string | number; api_error?: { err_code?: number }; message?: string };
  const code = e?.api_error?.err_code;
  return code === 10059 || code === 10014 || /not found/i.test(e?.message ?? '');
}

function parseDate(v: string | undefined): Date {
  const d = v ? new Date(v) : new Date();
  return Number.isNaN(d.getTime()) ? new Date() : d;
}

function headersToRecord(h: MsgHdrs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.get(k);
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * NATS JetStream adapter. Streams and durable consumers are declared at bootstrap (and again
 * after a reconnect); publishes carry `Nats-Msg-Id` = event id so the stream drops duplicates;
 * consumers ack explicitly after the handler succeeds, nak with a delay on failure, and after
 * the last delivery publish the event to `dead.<consumer>` and `term` it.
 *
 * The parts: the connection (connection.ts: connect loop, status watch, reconnect and liveness
 * listeners), the streams (streams.ts: declare, ensure, read), durable consumers (consumers.ts)
 * and broadcasts (broadcasts.ts); this class puts them together behind the EventBus port.
 */
import type { StreamSpec } from '@iam/contracts';
import type { Logger } from '../../logger';
import type { Metrics } from '../../metrics';
import type { NatsConnectionConfig } from '../../runtime';
import { type BroadcastOptions, type DurableConsumerSpec, type EventBus, type EventHandler, type IncomingEvent, type OutgoingEvent, publishInTrace, type Subscription } from '../port';
import { subscribeBroadcast } from './broadcasts';
import { JetStreamConnection } from './connection';
import { JetStreamConsumers } from './consumers';
import { outgoingHeaders } from './messages';
import { JetStreamNames } from './names';
import { JetStreamStreams } from './streams';

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

export class JetStreamEventBus implements EventBus {
  readonly kind = 'jetstream' as const;
  private readonly names: JetStreamNames;
  private readonly link: JetStreamConnection;
  private readonly streams: JetStreamStreams;
  private readonly consumers: JetStreamConsumers;
  private readonly subs = new Set<Subscription>();

  constructor(private readonly opts: JetStreamBusOptions) {
    this.names = new JetStreamNames(opts.namespace ?? '');
    this.link = new JetStreamConnection({ url: opts.url, name: opts.name, logger: opts.logger, connection: opts.connection, onConnect: (conn) => this.streams.redeclare(conn) });
    this.streams = new JetStreamStreams(this.link, this.names, { logger: opts.logger, replicas: opts.connection?.streamReplicas ?? 1, connectTimeoutMs: this.timeoutMs });
    this.consumers = new JetStreamConsumers(this.link, this.names, this.streams, { logger: opts.logger, metrics: opts.metrics, publish: (event) => this.publish(event) });
    void this.link.get().catch(() => undefined);
  }

  /** The namespace this bus lives in ('' in production). */
  get namespace(): string {
    return this.names.namespace;
  }

  private get timeoutMs(): number {
    return this.opts.publishTimeoutMs ?? 3_000;
  }

  onReconnect(listener: () => void): () => void {
    return this.link.onReconnect(listener);
  }

  declareStreams(streams: readonly StreamSpec[]): Promise<void> {
    return this.streams.declare(streams);
  }

  async publish(event: OutgoingEvent): Promise<void> {
    const timeout = this.timeoutMs;
    if (!this.link.isConnected) throw new Error('not connected to NATS');
    const conn = await this.link.get();
    await publishInTrace(event, { system: 'nats' }, async (traceparent) => {
      await conn.js.publish(this.names.subject(event.subject), event.data, { msgID: event.id, headers: outgoingHeaders(event, traceparent), timeout });
    });
  }

  consume(spec: DurableConsumerSpec): Subscription {
    return this.track(this.consumers.consume(spec));
  }

  read(spec: StreamSpec, opts: { readonly limit?: number } = {}): Promise<IncomingEvent[]> {
    return this.streams.read(spec, opts);
  }

  subscribe(subjects: readonly string[], handler: EventHandler, opts?: BroadcastOptions): Subscription {
    return this.track(subscribeBroadcast({ link: this.link, names: this.names, logger: this.opts.logger }, subjects, handler, opts));
  }

  consumerBacklog(consumer: Pick<DurableConsumerSpec, 'name' | 'stream'>): Promise<number> {
    return this.consumers.backlog(consumer);
  }

  check(): Promise<void> {
    return this.link.check();
  }

  async close(): Promise<void> {
    this.link.stop();
    await Promise.all([...this.subs].map((s) => s.stop()));
    await this.link.drain();
  }

  /** Keeps `sub` until it stops, so that close() stops whatever is still running. */
  private track(sub: Subscription): Subscription {
    const tracked: Subscription = {
      stop: async () => {
        await sub.stop();
        this.subs.delete(tracked);
      },
    };
    this.subs.add(tracked);
    return tracked;
  }
}

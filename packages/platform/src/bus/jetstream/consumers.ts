/**
 * Durable consumers: declared when consumed (and again whenever the consume loop restarts), acked
 * after the handler succeeds, nak'ed with a delay on failure, and after the last delivery
 * published to `dead.<consumer>` and `term`'ed.
 */
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { Logger } from '../../logger';
import type { Metrics } from '../../metrics';
import { backoffFor, deadLetterOf, handleInTrace, type DurableConsumerSpec, type OutgoingEvent, PermanentEventError, retryOf, Semaphore, type Subscription, subjectMatches } from '../port';
import { type Conn, type JetStreamConnection, sleep } from './connection';
import { incomingFromStream, isNotFound } from './messages';
import type { JetStreamNames } from './names';
import type { JetStreamStreams } from './streams';

export interface JetStreamConsumersOptions {
  readonly logger: Logger;
  /** Counts deliveries of consumers whose spec names no metrics of its own. */
  readonly metrics?: Metrics;
  /** Publishes a dead letter. */
  readonly publish: (event: OutgoingEvent) => Promise<void>;
}

export class JetStreamConsumers {
  constructor(
    private readonly link: JetStreamConnection,
    private readonly names: JetStreamNames,
    private readonly streams: JetStreamStreams,
    private readonly opts: JetStreamConsumersOptions,
  ) {}

  consume(spec: DurableConsumerSpec): Subscription {
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const sem = new Semaphore(spec.concurrency ?? 8);
    const loop = (async () => {
      let delay = 500;
      while (!stopped) {
        try {
          const conn = await this.link.get();
          await this.streams.ensure(conn, spec.stream);
          await this.ensureConsumer(conn, spec);
          const consumer = await conn.js.consumers.get(this.names.stream(spec.stream), spec.name);
          messages = await consumer.consume({ max_messages: Math.max(2 * (spec.concurrency ?? 8), 16) });
          // A stop() during the setup above found no messages to stop: waiting on them would never end.
          if (stopped) {
            messages.stop();
            break;
          }
          delay = 500;
          for await (const m of messages) {
            await sem.acquire();
            void this.handle(spec, m).finally(() => sem.release());
            if (stopped) break;
          }
        } catch (err) {
          if (stopped || this.link.isClosed) break;
          this.opts.logger.warn({ err: (err as Error).message, consumer: spec.name }, 'consumer interrupted; restarting');
        }
        if (!stopped) {
          await sleep(delay);
          delay = Math.min(delay * 2, 5_000);
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        messages?.stop();
        await loop;
        await sem.idle();
      },
    };
  }

  /** JetStream's own count: pending (not yet delivered) plus delivered and not acknowledged. */
  async backlog(consumer: Pick<DurableConsumerSpec, 'name' | 'stream'>): Promise<number> {
    const conn = await this.link.get();
    const info = await conn.jsm.consumers.info(this.names.stream(consumer.stream), consumer.name);
    return info.num_pending + info.num_ack_pending;
  }

  private async ensureConsumer(conn: Conn, spec: DurableConsumerSpec): Promise<void> {
    const stream = this.names.stream(spec.stream);
    const maxDeliver = spec.maxDeliver ?? 5;
    const filter = spec.subjects.map((s) => this.names.subject(s));
    const config = {
      durable_name: spec.name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // One delivery more than the handler budget: a crash during the last try still reaches the dead letter.
      max_deliver: maxDeliver + 1,
      // Unacknowledged (a consumer that died) → redelivered after this; handlers signal progress.
      ack_wait: nanos(15_000),
      max_ack_pending: spec.maxAckPending ?? 1_000,
      ...serverFilter(conn, filter),
    };
    try {
      const existing = await conn.jsm.consumers.info(stream, spec.name);
      const { filter_subject, filter_subjects } = existing.config;
      const wanted = serverFilter(conn, filter);
      // A release that changes the subjects changes the durable consumer too (its position kept):
      // the filter is part of the update, both fields set so the one not wanted is cleared.
      await conn.jsm.consumers.update(stream, spec.name, {
        max_deliver: config.max_deliver,
        ack_wait: config.ack_wait,
        max_ack_pending: config.max_ack_pending,
        filter_subject: wanted.filter_subject,
        filter_subjects: wanted.filter_subjects,
      });
      if (filter_subject !== wanted.filter_subject || String(filter_subjects ?? '') !== String(wanted.filter_subjects ?? '')) {
        this.opts.logger.info({ stream, consumer: spec.name, subjects: filter }, 'durable consumer subjects changed');
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await conn.jsm.consumers.add(stream, config);
      this.opts.logger.info({ stream, consumer: spec.name }, 'durable consumer created');
    }
  }

  private async handle(spec: DurableConsumerSpec, m: JsMsg): Promise<void> {
    if (spec.subjects.length > 1 && !spec.subjects.some((p) => subjectMatches(p, this.names.unprefix(m.subject)))) {
      m.ack();
      return;
    }
    const event = incomingFromStream(this.names, m);
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
          await this.opts.publish(deadLetterOf(spec.name, event, err, event.deliveryCount));
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
}

/**
 * Several filter subjects need NATS 2.10 (`filter_subjects`); on an older server the consumer
 * takes the whole stream and `handle` acks what the spec does not ask for.
 */
function serverFilter(conn: Conn, filter: string[]): { filter_subject?: string; filter_subjects?: string[] } {
  if (filter.length === 1) return { filter_subject: filter[0] };
  const [major = 0, minor = 0] = (conn.nc.info?.version ?? '0.0').split('.').map(Number);
  return major > 2 || (major === 2 && minor >= 10) ? { filter_subjects: filter } : {};
}

/**
 * The streams a bus declared: created or updated at declaration and again after every
 * (re)connect, and read from end to end through an ordered consumer.
 */
import type { StreamSpec } from '@iam/contracts';
import { DeliverPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { withTimeout } from '../../health';
import type { Logger } from '../../logger';
import type { IncomingEvent } from '../port';
import type { Conn, JetStreamConnection } from './connection';
import { incomingFromStream, isNotFound } from './messages';
import type { JetStreamNames } from './names';

export interface JetStreamStreamsOptions {
  readonly logger: Logger;
  /** Copies of each stream the server keeps (1 unless the connection config says more). */
  readonly replicas: number;
  /** How long `read` waits for a connection (ms). */
  readonly connectTimeoutMs: number;
}

export class JetStreamStreams {
  private readonly declared = new Map<string, StreamSpec>();

  constructor(
    private readonly link: JetStreamConnection,
    private readonly names: JetStreamNames,
    private readonly opts: JetStreamStreamsOptions,
  ) {}

  async declare(streams: readonly StreamSpec[]): Promise<void> {
    for (const s of streams) this.declared.set(s.name, s);
    const conn = await this.link.get();
    for (const s of streams) await this.ensure(conn, s);
  }

  /** Every stream declared so far, again (after a connect: the server may have lost its store). */
  async redeclare(conn: Conn): Promise<void> {
    for (const spec of this.declared.values()) await this.ensure(conn, spec);
  }

  async ensure(conn: Conn, spec: StreamSpec): Promise<void> {
    const name = this.names.stream(spec);
    const config = {
      name,
      subjects: spec.subjects.map((s) => this.names.subject(s)),
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: nanos(spec.maxAgeSeconds * 1000),
      duplicate_window: nanos(120_000),
      num_replicas: this.opts.replicas,
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

  /** Through an ordered (ephemeral) consumer from the first wanted sequence to the stream's last at the call. */
  async read(spec: StreamSpec, opts: { readonly limit?: number } = {}): Promise<IncomingEvent[]> {
    const conn = await withTimeout(this.link.get(), this.opts.connectTimeoutMs, 'NATS connection');
    const name = this.names.stream(spec);
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
          out.push({ ...incomingFromStream(this.names, m), deliveryCount: 1 });
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
}

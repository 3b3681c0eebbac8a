/**
 * The outbox table's entity: one row per event written with the change that caused it, published
 * by the relay (published_at), with the trace and request context it was written in.
 */
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'outbox_events' })
@Index('ix_outbox_events_pending', ['occurredAt'], { where: '"published_at" IS NULL' })
export class OutboxEventRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  subject!: string;

  @Column('bytea')
  payload!: Buffer;

  @Column('text', { nullable: true })
  traceparent!: string | null;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt!: Date;

  @Column('timestamptz', { name: 'published_at', nullable: true })
  publishedAt!: Date | null;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('text', { name: 'last_error', nullable: true })
  lastError!: string | null;

  /** The request context the event was written in (request-context.ts), published as headers. */
  @Column('jsonb', { nullable: true })
  headers!: Record<string, string> | null;

  /** Claimed by a relay until then (the relay's lease); null when no relay holds it. */
  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil!: Date | null;
}

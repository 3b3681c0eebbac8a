import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One row per event that asked for a mail: its status (`sending` while an attempt hands it to the
 * SMTP server, then `sent`, `retrying`, `dead_lettered`, or `recorded` by the log-only sender),
 * tries and last error (for operators).
 */
@Entity({ name: 'deliveries' })
@Index('ix_deliveries_status', ['status', 'updatedAt'])
@Index('ix_deliveries_recipient', ['recipient'])
export class DeliveryRow {
  @PrimaryColumn('uuid', { name: 'event_id' })
  eventId!: string;

  @Column('text')
  subject!: string;

  @Column('text')
  kind!: string;

  @Column('text')
  recipient!: string;

  @Column('text')
  status!: string;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('text', { name: 'last_error', default: '' })
  lastError!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'sent_at', nullable: true })
  sentAt!: Date | null;

  /** When the attempt now in `sending` began; null in any other status. */
  @Column('timestamptz', { name: 'sending_since', nullable: true })
  sendingSince!: Date | null;
}

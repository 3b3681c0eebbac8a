import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** A webhook endpoint: where to, which types, its sealed signing material, its health and its dispatch lease. */
@Entity({ name: 'webhook_endpoints' })
@Index('ix_webhook_endpoints_order', ['createdAt', 'id'])
export class WebhookEndpointRow {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  url!: string;

  @Column('text', { default: '' })
  description!: string;

  @Column('text', { name: 'event_types', array: true, default: '{}' })
  eventTypes!: string[];

  @Column('boolean', { default: true })
  enabled!: boolean;

  @Column('text', { name: 'disabled_reason', default: '' })
  disabledReason!: string;

  @Column('bytea')
  secret!: Buffer;

  @Column('bytea', { name: 'previous_secret', nullable: true })
  previousSecret!: Buffer | null;

  @Column('bytea', { name: 'signing_key', nullable: true })
  signingKey!: Buffer | null;

  @Column('bytea', { name: 'previous_signing_key', nullable: true })
  previousSigningKey!: Buffer | null;

  @Column('text', { name: 'public_key', default: '' })
  publicKey!: string;

  @Column('timestamptz', { name: 'previous_expires_at', nullable: true })
  previousExpiresAt!: Date | null;

  @Column('timestamptz', { name: 'failing_since', nullable: true })
  failingSince!: Date | null;

  @Column('timestamptz', { name: 'retry_at', nullable: true })
  retryAt!: Date | null;

  @Column('timestamptz', { name: 'claimed_at', nullable: true })
  claimedAt!: Date | null;

  @Column('timestamptz', { name: 'lease_until', nullable: true })
  leaseUntil!: Date | null;

  @Column('uuid', { name: 'lease_token', nullable: true })
  leaseToken!: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}

/** One event for one endpoint: its body (signed and sent as is by every attempt), its place in the endpoint's line and its state. */
@Entity({ name: 'webhook_messages' })
@Index('ix_webhook_messages_line', ['endpointId', 'seq'], { where: `"status" = 'pending' AND "in_line"` })
@Index('ix_webhook_messages_aside', ['endpointId', 'nextAttemptAt'], { where: `"status" = 'pending' AND NOT "in_line"` })
@Index('ix_webhook_messages_list', ['endpointId', 'seq'])
@Index('ix_webhook_messages_dead', ['endpointId', 'occurredAt'], { where: `"status" = 'dead'` })
@Index('ix_webhook_messages_done', ['updatedAt'], { where: `"status" = 'delivered'` })
export class WebhookMessageRow {
  @PrimaryColumn('uuid', { name: 'endpoint_id' })
  endpointId!: string;

  @PrimaryColumn('uuid')
  id!: string;

  @Column('bigint', { generated: 'increment' })
  seq!: string;

  @Column('text', { name: 'event_type' })
  eventType!: string;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt!: Date;

  @Column('text')
  payload!: string;

  @Column('text', { default: 'pending' })
  status!: string;

  @Column('boolean', { name: 'in_line', default: true })
  inLine!: boolean;

  @Column('integer', { default: 0 })
  attempts!: number;

  @Column('integer', { name: 'total_attempts', default: 0 })
  totalAttempts!: number;

  @Column('timestamptz', { name: 'next_attempt_at', default: () => 'now()' })
  nextAttemptAt!: Date;

  @Column('integer', { name: 'last_status_code', nullable: true })
  lastStatusCode!: number | null;

  @Column('text', { name: 'last_error', default: '' })
  lastError!: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  @Column('timestamptz', { name: 'delivered_at', nullable: true })
  deliveredAt!: Date | null;

  @Column('timestamptz', { name: 'dead_at', nullable: true })
  deadAt!: Date | null;
}

/** One attempt at a message: when, how long, the answer (its first bytes) or the error. */
@Entity({ name: 'webhook_attempts' })
@Index('ix_webhook_attempts_endpoint', ['endpointId', 'id'])
@Index('ix_webhook_attempts_message', ['endpointId', 'messageId', 'id'])
export class WebhookAttemptRow {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  @Column('uuid', { name: 'endpoint_id' })
  endpointId!: string;

  @Column('uuid', { name: 'message_id' })
  messageId!: string;

  @Column('integer')
  attempt!: number;

  @Column('timestamptz', { name: 'started_at' })
  startedAt!: Date;

  @Column('integer', { name: 'duration_ms' })
  durationMs!: number;

  @Column('integer', { name: 'status_code', nullable: true })
  statusCode!: number | null;

  @Column('text')
  outcome!: string;

  @Column('text', { default: '' })
  response!: string;

  @Column('text', { default: '' })
  error!: string;
}

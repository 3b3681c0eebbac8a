import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outgoing webhooks (issue #38): endpoints (signing material sealed), messages (one per event and
 * endpoint, in the order they were queued: `seq`), and attempts. No foreign keys: endpoints are
 * only ever soft-deleted, and housekeeping removes a message's attempts with it.
 */
export class Webhooks1766000000400 implements MigrationInterface {
  name = 'Webhooks1766000000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "webhook_endpoints" (
        "id" uuid PRIMARY KEY,
        "url" text NOT NULL,
        "description" text NOT NULL DEFAULT '',
        "event_types" text[] NOT NULL DEFAULT '{}',
        "enabled" boolean NOT NULL DEFAULT true,
        "disabled_reason" text NOT NULL DEFAULT '',
        "secret" bytea NOT NULL,
        "previous_secret" bytea,
        "signing_key" bytea,
        "previous_signing_key" bytea,
        "public_key" text NOT NULL DEFAULT '',
        "previous_expires_at" timestamptz,
        "failing_since" timestamptz,
        "retry_at" timestamptz,
        "claimed_at" timestamptz,
        "lease_until" timestamptz,
        "lease_token" uuid,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "deleted_at" timestamptz
      )`);
    await q.query(`CREATE INDEX "ix_webhook_endpoints_order" ON "webhook_endpoints" ("created_at", "id")`);
    await q.query(`
      CREATE TABLE "webhook_messages" (
        "endpoint_id" uuid NOT NULL,
        "id" uuid NOT NULL,
        "seq" bigserial NOT NULL,
        "event_type" text NOT NULL,
        "occurred_at" timestamptz NOT NULL,
        "payload" text NOT NULL,
        "status" text NOT NULL DEFAULT 'pending',
        "in_line" boolean NOT NULL DEFAULT true,
        "attempts" integer NOT NULL DEFAULT 0,
        "total_attempts" integer NOT NULL DEFAULT 0,
        "next_attempt_at" timestamptz NOT NULL DEFAULT now(),
        "last_status_code" integer,
        "last_error" text NOT NULL DEFAULT '',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "delivered_at" timestamptz,
        "dead_at" timestamptz,
        PRIMARY KEY ("endpoint_id", "id")
      )`);
    await q.query(`CREATE INDEX "ix_webhook_messages_line" ON "webhook_messages" ("endpoint_id", "seq") WHERE "status" = 'pending' AND "in_line"`);
    await q.query(`CREATE INDEX "ix_webhook_messages_aside" ON "webhook_messages" ("endpoint_id", "next_attempt_at") WHERE "status" = 'pending' AND NOT "in_line"`);
    await q.query(`CREATE INDEX "ix_webhook_messages_list" ON "webhook_messages" ("endpoint_id", "seq")`);
    await q.query(`CREATE INDEX "ix_webhook_messages_dead" ON "webhook_messages" ("endpoint_id", "occurred_at") WHERE "status" = 'dead'`);
    await q.query(`CREATE INDEX "ix_webhook_messages_done" ON "webhook_messages" ("updated_at") WHERE "status" = 'delivered'`);
    await q.query(`
      CREATE TABLE "webhook_attempts" (
        "id" bigserial PRIMARY KEY,
        "endpoint_id" uuid NOT NULL,
        "message_id" uuid NOT NULL,
        "attempt" integer NOT NULL,
        "started_at" timestamptz NOT NULL,
        "duration_ms" integer NOT NULL,
        "status_code" integer,
        "outcome" text NOT NULL,
        "response" text NOT NULL DEFAULT '',
        "error" text NOT NULL DEFAULT ''
      )`);
    await q.query(`CREATE INDEX "ix_webhook_attempts_endpoint" ON "webhook_attempts" ("endpoint_id", "id")`);
    await q.query(`CREATE INDEX "ix_webhook_attempts_message" ON "webhook_attempts" ("endpoint_id", "message_id", "id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "webhook_attempts"');
    await q.query('DROP TABLE "webhook_messages"');
    await q.query('DROP TABLE "webhook_endpoints"');
  }
}

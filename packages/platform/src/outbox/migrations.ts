/**
 * The outbox table's migrations, listed in every service's migrations (each service has its own
 * database); never edited once landed.
 */
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Include in every service's migrations list (each service has its own database). */
export class CreateOutbox1763800000000 implements MigrationInterface {
  name = 'CreateOutbox1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "outbox_events" (
        "id" uuid PRIMARY KEY,
        "subject" text NOT NULL,
        "payload" bytea NOT NULL,
        "traceparent" text,
        "occurred_at" timestamptz NOT NULL,
        "published_at" timestamptz,
        "attempts" integer NOT NULL DEFAULT 0,
        "last_error" text
      )`);
    await q.query(`CREATE INDEX "ix_outbox_events_pending" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "outbox_events"');
  }
}

/**
 * The request context of each event (who, client IP, user agent), published as event headers.
 * Include in every service's migrations list, after CreateOutbox1763800000000.
 */
export class OutboxHeaders1764200000200 implements MigrationInterface {
  name = 'OutboxHeaders1764200000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" ADD COLUMN "headers" jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" DROP COLUMN "headers"');
  }
}

/**
 * The relay's lease: a row claimed by a relay is leased until `lease_until`, so claiming and
 * marking are one statement each with no transaction held across the publish (a relay that dies
 * mid-batch leaves rows that another relay claims once the lease runs out).
 * Include in every service's migrations list, after OutboxHeaders1764200000200.
 */
export class OutboxLease1764900000000 implements MigrationInterface {
  name = 'OutboxLease1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" ADD COLUMN "lease_until" timestamptz');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "outbox_events" DROP COLUMN "lease_until"');
  }
}

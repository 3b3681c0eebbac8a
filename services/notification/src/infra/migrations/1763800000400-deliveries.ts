import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Deliveries1763800000400 implements MigrationInterface {
  name = 'Deliveries1763800000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "deliveries" (
        "event_id" uuid PRIMARY KEY,
        "subject" text NOT NULL,
        "kind" text NOT NULL,
        "recipient" text NOT NULL,
        "status" text NOT NULL,
        "attempts" integer NOT NULL DEFAULT 0,
        "last_error" text NOT NULL DEFAULT '',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "sent_at" timestamptz
      )`);
    await q.query(`CREATE INDEX "ix_deliveries_status" ON "deliveries" ("status", "updated_at")`);
    await q.query(`CREATE INDEX "ix_deliveries_recipient" ON "deliveries" ("recipient")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "deliveries"');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery whose mail is being handed to the SMTP server is 'sending', since `sending_since`:
 * a redelivery decides by that age whether the attempt may still be running or has died.
 */
export class DeliverySending1764700000400 implements MigrationInterface {
  name = 'DeliverySending1764700000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "deliveries" ADD COLUMN "sending_since" timestamptz');
    // An attempt begun before this step ('pending') has been sending since its last update.
    await q.query(`UPDATE "deliveries" SET "status" = 'sending', "sending_since" = "updated_at" WHERE "status" = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE "deliveries" SET "status" = 'pending' WHERE "status" = 'sending'`);
    await q.query('ALTER TABLE "deliveries" DROP COLUMN "sending_since"');
  }
}

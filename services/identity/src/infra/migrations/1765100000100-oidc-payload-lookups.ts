import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The provider's uid and user-code lookups index only the rows that have one (sessions and
 * interactions; device codes): codes and tokens, the rows every token request writes, no longer
 * add an entry for NULL to each of them. The lookups (`uid = $2`, `user_code = $2`) imply NOT NULL,
 * so the partial indexes serve them.
 */
export class OidcPayloadLookups1765100000100 implements MigrationInterface {
  name = 'OidcPayloadLookups1765100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_oidc_payloads_user_code"');
    await q.query('DROP INDEX "ix_oidc_payloads_uid"');
    await q.query(`CREATE INDEX "ix_oidc_payloads_user_code" ON "oidc_payloads" ("user_code") WHERE "user_code" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_uid" ON "oidc_payloads" ("uid") WHERE "uid" IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_oidc_payloads_user_code"');
    await q.query('DROP INDEX "ix_oidc_payloads_uid"');
    await q.query(`CREATE INDEX "ix_oidc_payloads_user_code" ON "oidc_payloads" ("user_code")`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_uid" ON "oidc_payloads" ("uid")`);
  }
}

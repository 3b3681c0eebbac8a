import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OpenID provider's records (oidc-provider's adapter model): sessions, interactions, grants,
 * codes, tokens, device codes, PAR requests. One table; `kind` is the model name, `id` unique
 * within it. Looked up by grant (revocation), user code (device flow) and uid (sessions);
 * expired rows are purged by housekeeping.
 */
export class OidcPayloads1765000000100 implements MigrationInterface {
  name = 'OidcPayloads1765000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "oidc_payloads" (
        "kind" varchar(40) NOT NULL,
        "id" varchar(200) NOT NULL,
        "payload" jsonb NOT NULL,
        "grant_id" varchar(200),
        "user_code" varchar(200),
        "uid" varchar(200),
        "account_id" varchar(200),
        "expires_at" timestamptz,
        "consumed_at" timestamptz,
        PRIMARY KEY ("kind", "id")
      )`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_grant" ON "oidc_payloads" ("grant_id")`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_user_code" ON "oidc_payloads" ("user_code")`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_uid" ON "oidc_payloads" ("uid")`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_account" ON "oidc_payloads" ("account_id")`);
    await q.query(`CREATE INDEX "ix_oidc_payloads_expires" ON "oidc_payloads" ("expires_at")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "oidc_payloads"');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per client: the algorithm of its ID tokens (RS256 by default: every relying party verifies it,
 * OpenID Connect Core §15.1; clients registered before get it too, as the provider's ID tokens
 * were EdDSA only and most relying parties could not verify them), the algorithm of a signed
 * userinfo answer (none: plain JSON), and whether it is a resource server (introspects every
 * client's access tokens; Administrator only). Issue #36 items 1 and 3.
 */
export class ClientTokenAlgorithms1765400000800 implements MigrationInterface {
  name = 'ClientTokenAlgorithms1765400000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "oauth_clients" ADD COLUMN "id_token_signed_response_alg" text NOT NULL DEFAULT 'RS256'`);
    await q.query(`ALTER TABLE "oauth_clients" ADD COLUMN "userinfo_signed_response_alg" text`);
    await q.query(`ALTER TABLE "oauth_clients" ADD COLUMN "resource_server" boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "oauth_clients" DROP COLUMN "resource_server"');
    await q.query('ALTER TABLE "oauth_clients" DROP COLUMN "userinfo_signed_response_alg"');
    await q.query('ALTER TABLE "oauth_clients" DROP COLUMN "id_token_signed_response_alg"');
  }
}

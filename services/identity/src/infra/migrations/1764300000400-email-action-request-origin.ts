import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where an accepted email-action request came from: the trace it continues and the request
 * context (client IP, user agent) its event carries to the audit trail, resumed by the worker.
 */
export class EmailActionRequestOrigin1764300000400 implements MigrationInterface {
  name = 'EmailActionRequestOrigin1764300000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "email_action_requests" ADD COLUMN "traceparent" text, ADD COLUMN "context" jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "email_action_requests" DROP COLUMN "traceparent", DROP COLUMN "context"');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trail reads newest first by when things happened (occurred_at, then seq), under every
 * filter: one index per filter in that order, so a page of 100 is an index range at any depth
 * and for any time window (ordering by seq alone made a time window far back a walk through
 * everything newer). Replaces the seq-ordered indexes of 1764200000000.
 */
export class AuditTimeOrder1764300000500 implements MigrationInterface {
  name = 'AuditTimeOrder1764300000500';

  async up(q: QueryRunner): Promise<void> {
    for (const ix of ['ix_audit_actor', 'ix_audit_target', 'ix_audit_action', 'ix_audit_occurred']) await q.query(`DROP INDEX IF EXISTS "${ix}"`);
    await q.query(`CREATE INDEX "ix_audit_time" ON "audit_entries" ("occurred_at" DESC, "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_actor_time" ON "audit_entries" ("actor_id", "occurred_at" DESC, "seq" DESC) WHERE "actor_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_audit_target_time" ON "audit_entries" ("target_id", "occurred_at" DESC, "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_action_time" ON "audit_entries" ("action" text_pattern_ops, "occurred_at" DESC, "seq" DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const ix of ['ix_audit_time', 'ix_audit_actor_time', 'ix_audit_target_time', 'ix_audit_action_time']) await q.query(`DROP INDEX "${ix}"`);
    await q.query(`CREATE INDEX "ix_audit_actor" ON "audit_entries" ("actor_id", "seq" DESC) WHERE "actor_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_audit_target" ON "audit_entries" ("target_id", "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_action" ON "audit_entries" ("action" text_pattern_ops, "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_occurred" ON "audit_entries" ("occurred_at", "seq")`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AuditTrail1764200000000 implements MigrationInterface {
  name = 'AuditTrail1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "audit_entries" (
        "seq" bigint PRIMARY KEY,
        "id" uuid NOT NULL UNIQUE,
        "event_id" text NOT NULL UNIQUE,
        "occurred_at" timestamptz NOT NULL,
        "recorded_at" timestamptz NOT NULL,
        "actor_type" text NOT NULL CHECK ("actor_type" IN ('user', 'system', 'anonymous')),
        "actor_id" text,
        "actor_email" text,
        "action" text NOT NULL,
        "target_type" text NOT NULL,
        "target_id" text NOT NULL,
        "changes" jsonb NOT NULL,
        "trace_id" text,
        "client_ip" text,
        "user_agent" text,
        "prev_hash" char(64) NOT NULL,
        "hash" char(64) NOT NULL
      )`);
    // Newest first under each filter: (filter column, seq DESC).
    await q.query(`CREATE INDEX "ix_audit_actor" ON "audit_entries" ("actor_id", "seq" DESC) WHERE "actor_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "ix_audit_target" ON "audit_entries" ("target_id", "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_action" ON "audit_entries" ("action" text_pattern_ops, "seq" DESC)`);
    await q.query(`CREATE INDEX "ix_audit_occurred" ON "audit_entries" ("occurred_at", "seq")`);
    // The chain's one head row: the last entry, and where the retained chain starts (retention).
    await q.query(`
      CREATE TABLE "audit_chain" (
        "id" smallint PRIMARY KEY CHECK ("id" = 1),
        "last_seq" bigint NOT NULL,
        "last_hash" char(64) NOT NULL,
        "first_seq" bigint NOT NULL,
        "anchor_hash" char(64) NOT NULL
      )`);
    await q.query(`INSERT INTO "audit_chain" VALUES (1, 0, repeat('0', 64), 1, repeat('0', 64))`);
    // Append-only: no UPDATE or TRUNCATE; DELETE only inside the retention step.
    await q.query(`
      CREATE FUNCTION "audit_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('audit.retention', true) = 'on' THEN RETURN OLD; END IF;
        RAISE EXCEPTION 'audit entries are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`CREATE TRIGGER "audit_entries_append_only" BEFORE UPDATE OR DELETE ON "audit_entries" FOR EACH ROW EXECUTE FUNCTION "audit_entries_append_only"()`);
    await q.query(`CREATE TRIGGER "audit_entries_no_truncate" BEFORE TRUNCATE ON "audit_entries" FOR EACH STATEMENT EXECUTE FUNCTION "audit_entries_append_only"()`);
    // The projection: what the trail knows of users, roles and permissions (before/after, actor emails).
    await q.query(`
      CREATE TABLE "audit_users" (
        "user_id" text PRIMARY KEY,
        "email" text NOT NULL,
        "first_name" text NOT NULL,
        "last_name" text NOT NULL,
        "roles" text[] NOT NULL
      )`);
    await q.query(`CREATE TABLE "audit_names" ("kind" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, PRIMARY KEY ("kind", "id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE "audit_names"');
    await q.query('DROP TABLE "audit_users"');
    await q.query('DROP TABLE "audit_chain"');
    await q.query('DROP TABLE "audit_entries"');
    await q.query('DROP FUNCTION "audit_entries_append_only"()');
  }
}

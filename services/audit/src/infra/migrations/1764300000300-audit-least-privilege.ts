import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention without DELETE for the runtime role: `audit_purge(batch)` runs as this schema's owner
 * (SECURITY DEFINER) and removes at most `batch` of the oldest entries, only a prefix of the chain
 * recorded before now − audit_settings.retention_days, keeping the last removed hash as the
 * anchor. The runtime role may call it but not change the setting, nor UPDATE or DELETE entries
 * (grants narrowed by the migrate step: privileges.ts).
 */
export class AuditLeastPrivilege1764300000300 implements MigrationInterface {
  name = 'AuditLeastPrivilege1764300000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "audit_settings" (
        "id" smallint PRIMARY KEY CHECK ("id" = 1),
        "retention_days" integer NOT NULL CHECK ("retention_days" > 0)
      )`);
    await q.query(`INSERT INTO "audit_settings" VALUES (1, 365)`);
    await q.query(`
      CREATE FUNCTION "audit_purge"("batch" integer) RETURNS integer
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      DECLARE
        cutoff timestamptz;
        first bigint;
        upto bigint;
        anchor char(64);
        removed integer;
      BEGIN
        SELECT now() - make_interval(days => s.retention_days) INTO cutoff FROM audit_settings s WHERE s.id = 1;
        SELECT c.first_seq INTO first FROM audit_chain c WHERE c.id = 1 FOR UPDATE;
        -- The longest prefix of the next batch recorded before the cutoff.
        SELECT max(p.seq) INTO upto FROM (
          SELECT o.seq, bool_and(o.recorded_at < cutoff) OVER (ORDER BY o.seq) AS old
            FROM (SELECT e.seq, e.recorded_at FROM audit_entries e WHERE e.seq >= first ORDER BY e.seq LIMIT greatest("batch", 1)) o
        ) p WHERE p.old;
        IF upto IS NULL THEN RETURN 0; END IF;
        SELECT e.hash INTO anchor FROM audit_entries e WHERE e.seq = upto;
        PERFORM set_config('audit.retention', 'on', true);
        DELETE FROM audit_entries e WHERE e.seq <= upto;
        GET DIAGNOSTICS removed = ROW_COUNT;
        PERFORM set_config('audit.retention', 'off', true);
        UPDATE audit_chain SET first_seq = upto + 1, anchor_hash = anchor WHERE id = 1;
        RETURN removed;
      END $$`);
    await q.query(`REVOKE ALL ON FUNCTION "audit_purge"(integer) FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION "audit_purge"(integer)');
    await q.query('DROP TABLE "audit_settings"');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** audit_purge() as 1764300000300 made it, but for how it opens the trigger to its own DELETE and closes it again. */
function purgeFunction(pass: { open: string; close: string }): string {
  return `
    CREATE OR REPLACE FUNCTION "audit_purge"("batch" integer) RETURNS integer
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
      ${pass.open}
      DELETE FROM audit_entries e WHERE e.seq <= upto;
      GET DIAGNOSTICS removed = ROW_COUNT;
      ${pass.close}
      UPDATE audit_chain SET first_seq = upto + 1, anchor_hash = anchor WHERE id = 1;
      RETURN removed;
    END $$`;
}

/**
 * Retention's exemption from the append-only trigger is no longer a setting: any session could
 * `SET LOCAL audit.retention = 'on'` and delete entries (the owner's rewrite of the chain did).
 * Now the trigger lets a DELETE through only in a transaction that audit_purge() itself entered
 * in `audit_purge_grants`, a table no role but the schema's owner may touch; audit_purge() (SECURITY
 * DEFINER, owned by that owner) writes its transaction id there for the length of its own
 * DELETE and removes it before it returns. No session can SET its way past the trigger; the
 * owner still owns the table and the trigger (it could disable either), which is why the
 * chain's head is also signed and published outside the database (signed checkpoints).
 */
export class AuditPurgeGuard1764600000000 implements MigrationInterface {
  name = 'AuditPurgeGuard1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "audit_purge_grants" ("txid" bigint PRIMARY KEY)`);
    // Default privileges (the runtime role's DML on every new table) must not reach it.
    await q.query(`REVOKE ALL ON "audit_purge_grants" FROM PUBLIC`);
    await q.query(`
      DO $$
      DECLARE g record;
      BEGIN
        FOR g IN SELECT DISTINCT a.grantee::regrole::text AS role
                   FROM pg_class c, aclexplode(c.relacl) a
                  WHERE c.oid = 'audit_purge_grants'::regclass AND a.grantee <> c.relowner AND a.grantee <> 0
        LOOP
          EXECUTE 'REVOKE ALL ON audit_purge_grants FROM ' || g.role;
        END LOOP;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION "audit_entries_append_only"() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND EXISTS (SELECT 1 FROM audit_purge_grants g WHERE g.txid = txid_current()) THEN RETURN OLD; END IF;
        RAISE EXCEPTION 'audit entries are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(
      purgeFunction({
        open: 'INSERT INTO audit_purge_grants (txid) VALUES (txid_current()) ON CONFLICT DO NOTHING;',
        close: 'DELETE FROM audit_purge_grants g WHERE g.txid = txid_current();',
      }),
    );
    await q.query(`REVOKE ALL ON FUNCTION "audit_purge"(integer) FROM PUBLIC`);
    await q.query(`REVOKE ALL ON FUNCTION "audit_entries_append_only"() FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION "audit_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('audit.retention', true) = 'on' THEN RETURN OLD; END IF;
        RAISE EXCEPTION 'audit entries are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(purgeFunction({ open: "PERFORM set_config('audit.retention', 'on', true);", close: "PERFORM set_config('audit.retention', 'off', true);" }));
    await q.query('DROP TABLE "audit_purge_grants"');
  }
}

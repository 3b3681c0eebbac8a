/**
 * The audit database's grants beyond the platform's (DML on every table): the runtime role only
 * appends entries (no UPDATE, DELETE or TRUNCATE), moves the chain head, reads the retention
 * setting, and purges through audit_purge(); audit_purge_grants (retention's pass past the
 * append-only trigger) is the owner's alone. Run by `migrate` as the owner, after the platform's
 * grants; and the retention setting from AUDIT_RETENTION_DAYS, which only the owner may change.
 */
import { type Env, type Logger, quoteIdent, readConfig } from '@iam/platform';
import type { DataSource } from 'typeorm';

export async function narrowRuntimeRole(ds: DataSource, role: string): Promise<void> {
  const r = quoteIdent(role);
  await ds.transaction(async (m) => {
    await m.query(`REVOKE UPDATE, DELETE, TRUNCATE ON audit_entries FROM ${r}`);
    await m.query(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_settings FROM ${r}`);
    await m.query(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_chain FROM ${r}`);
    await m.query(`GRANT UPDATE (last_seq, last_hash) ON audit_chain TO ${r}`);
    await m.query(`REVOKE ALL ON audit_purge_grants FROM ${r}`);
    await m.query(`GRANT EXECUTE ON FUNCTION audit_purge(integer) TO ${r}`);
  });
}

export async function setRetentionDays(ds: DataSource, days: number): Promise<void> {
  await ds.query('UPDATE audit_settings SET retention_days = $1 WHERE id = 1', [days]);
}

/** The `migrate` step's own part (runMigrate's afterMigrate). */
export async function afterMigrate(ds: DataSource, ctx: { runtimeRole?: string; env: Env; logger: Logger }): Promise<void> {
  const { days } = readConfig(ctx.env, (e) => ({ days: e.int('AUDIT_RETENTION_DAYS', { default: 365, min: 1, max: 36_500 }) }));
  await setRetentionDays(ds, days);
  if (ctx.runtimeRole) await narrowRuntimeRole(ds, ctx.runtimeRole);
  ctx.logger.info({ retentionDays: days, runtimeRole: ctx.runtimeRole }, 'audit: retention set; runtime role may append and purge only');
}

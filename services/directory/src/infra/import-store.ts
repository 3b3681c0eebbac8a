/**
 * Privileged (it writes password hashes): the bulk import's reads of who exists already and its
 * multi-row inserts of users with their roles, one statement each per batch.
 */
import type { EntityManager } from 'typeorm';
import type { ImportStore, ImportedUserRow } from '../domain/ports';

export class PgImportStore implements ImportStore {
  constructor(private readonly m: EntityManager) {}

  async existing(keys: { emails: readonly string[]; externalIds: readonly string[]; ids: readonly string[] }): Promise<{ emails: Map<string, string>; externalIds: Map<string, string>; ids: Set<string> }> {
    const rows = await this.m.query<Array<{ id: string; email: string; external_id: string | null; deleted: boolean }>>(
      `SELECT id, email, external_id, deleted_at IS NOT NULL AS deleted FROM users
        WHERE (deleted_at IS NULL AND (email = ANY($1::text[]) OR external_id = ANY($2::text[]))) OR id = ANY($3::uuid[])`,
      [keys.emails, keys.externalIds, keys.ids],
    );
    const live = rows.filter((r) => !r.deleted);
    return {
      emails: new Map(live.map((r) => [r.email, r.id])),
      externalIds: new Map(live.flatMap((r) => (r.external_id === null ? [] : [[r.external_id, r.id] as const]))),
      ids: new Set(rows.map((r) => r.id)),
    };
  }

  async insertMany(users: readonly ImportedUserRow[]): Promise<Set<string>> {
    if (users.length === 0) return new Set();
    const col = <K extends keyof ImportedUserRow>(k: K) => users.map((u) => u[k]);
    // ON CONFLICT DO NOTHING: a row another writer took meanwhile (same email, external id or id)
    // is left out, and reported as skipped.
    const inserted = await this.m.query<Array<{ id: string }>>(
      `INSERT INTO users (id, first_name, last_name, email, phone, password_hash, email_verified, external_id, password_migration, password_change_required)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::boolean[], $8::text[], $9::text[], $10::boolean[])
       ON CONFLICT DO NOTHING RETURNING id`,
      [col('id'), col('firstName'), col('lastName'), col('email'), col('phone'), col('passwordHash'), col('emailVerified'), col('externalId'), col('passwordMigration'), col('passwordChangeRequired')],
    );
    const ids = new Set(inserted.map((r) => r.id));
    const links = users.filter((u) => ids.has(u.id)).flatMap((u) => u.roleIds.map((roleId) => [u.id, roleId] as const));
    if (links.length > 0) {
      await this.m.query('INSERT INTO user_roles (user_id, role_id) SELECT * FROM unnest($1::uuid[], $2::uuid[]) ON CONFLICT DO NOTHING', [links.map((l) => l[0]), links.map((l) => l[1])]);
    }
    return ids;
  }
}

/** The domains organizations claim, and their verification state; every statement but the re-check queue names its organization. */
import type { EntityManager } from 'typeorm';
import type { Page } from '../domain/model';
import type { DomainStatus, DomainStore, MemberQuery, OrganizationDomain } from '../domain/organizations';
import { mapOrganizationConflicts } from './organization-conflicts';

interface DomainSql {
  id: string;
  organization_id: string;
  domain: string;
  status: DomainStatus;
  challenge: string;
  checked_at: Date | null;
  verified_at: Date | null;
  created_at: Date;
  created_us: string;
}

const SELECT = `SELECT d.id, d.organization_id, d.domain, d.status, d.challenge, d.checked_at, d.verified_at, d.created_at,
  (extract(epoch FROM d.created_at) * 1000000)::int8::text AS created_us FROM organization_domains d`;

const toDomain = (r: DomainSql): OrganizationDomain => ({
  id: r.id,
  organizationId: r.organization_id,
  domain: r.domain,
  status: r.status,
  challenge: r.challenge,
  checkedAt: r.checked_at,
  verifiedAt: r.verified_at,
  createdAt: r.created_at,
});

export class PgDomainStore implements DomainStore {
  constructor(private readonly m: EntityManager) {}

  async insert(d: { id: string; organizationId: string; domain: string; challenge: string }): Promise<void> {
    await mapOrganizationConflicts(() =>
      this.m.query('INSERT INTO organization_domains (id, organization_id, domain, challenge) VALUES ($1, $2, $3, $4)', [d.id, d.organizationId, d.domain, d.challenge]),
    );
  }

  async find(organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<OrganizationDomain | null> {
    const rows = await this.m.query<DomainSql[]>(`${SELECT} WHERE d.organization_id = $1 AND d.id = $2 ${opts.forUpdate ? 'FOR UPDATE' : ''}`, [organizationId, id]);
    return rows[0] ? toDomain(rows[0]) : null;
  }

  async list(organizationId: string, query: MemberQuery): Promise<Page<OrganizationDomain>> {
    const params: unknown[] = [organizationId];
    let cond = 'd.organization_id = $1';
    if (query.after) {
      params.push(query.after.values[0], query.after.id);
      cond += ` AND (d.created_at, d.id) > (timestamptz 'epoch' + $2::int8 * interval '1 microsecond', $3::uuid)`;
    }
    const [{ n }] = query.after ? [{ n: '0' }] : await this.m.query<[{ n: string }]>('SELECT count(*) AS n FROM organization_domains d WHERE d.organization_id = $1', [organizationId]);
    params.push(query.pageSize + 1, query.after ? 0 : ((query.page ?? 1) - 1) * query.pageSize);
    const rows = await this.m.query<DomainSql[]>(`${SELECT} WHERE ${cond} ORDER BY d.created_at, d.id LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
    const page = rows.slice(0, query.pageSize);
    const last = page[page.length - 1];
    return { items: page.map(toDomain), totalCount: Number(n), totalCountExact: true, next: rows.length > query.pageSize && last ? { values: [last.created_us], id: last.id } : undefined };
  }

  async setStatus(organizationId: string, id: string, status: DomainStatus): Promise<void> {
    await mapOrganizationConflicts(() =>
      this.m.query(
        `UPDATE organization_domains SET status = $3, checked_at = now(), verified_at = CASE WHEN $3 = 'verified' THEN coalesce(verified_at, now()) ELSE NULL END
          WHERE organization_id = $1 AND id = $2`,
        [organizationId, id, status],
      ),
    );
  }

  async remove(organizationId: string, id: string): Promise<boolean> {
    const [, n] = await this.m.query<[unknown, number]>('DELETE FROM organization_domains WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    return n > 0;
  }

  async due(limit: number, checkedBefore: Date): Promise<OrganizationDomain[]> {
    const rows = await this.m.query<DomainSql[]>(
      `${SELECT} WHERE d.status IN ('pending', 'verified') AND (d.checked_at IS NULL OR d.checked_at < $1) ORDER BY d.checked_at NULLS FIRST, d.id LIMIT $2`,
      [checkedBefore, limit],
    );
    return rows.map(toDomain);
  }

  async isVerified(organizationId: string, domain: string): Promise<boolean> {
    const rows = await this.m.query<unknown[]>(
      `SELECT 1 FROM organization_domains WHERE organization_id = $1 AND domain = $2 AND status = 'verified' FOR SHARE`,
      [organizationId, domain],
    );
    return rows.length > 0;
  }

  async jitOrganizations(domain: string): Promise<Array<{ organizationId: string; roleIds: string[] }>> {
    const rows = await this.m.query<Array<{ id: string; jit_role_ids: string[] }>>(
      `SELECT o.id, o.jit_role_ids FROM organization_domains d JOIN organizations o ON o.id = d.organization_id AND o.deleted_at IS NULL AND o.jit_enabled
        WHERE d.domain = $1 AND d.status = 'verified' ORDER BY o.id`,
      [domain],
    );
    return rows.map((r) => ({ organizationId: r.id, roleIds: r.jit_role_ids }));
  }
}

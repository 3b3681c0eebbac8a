/** The organization tables' unique indexes, and the conflict (409) a caller sees when a write breaks one. */
import { AppError, UNIQUE_VIOLATION, pgConstraint, pgErrorCode } from '@iam/platform';

const CONFLICTS: Record<string, { field: string; detail: string; message?: string }> = {
  uq_organizations_slug_live: { field: 'slug', detail: 'An organization with this slug already exists.' },
  uq_organizations_slug_skeleton_live: { field: 'slug', detail: 'An organization whose slug looks the same already exists.', message: 'looks like a slug already taken' },
  uq_organization_roles_name_skeleton_live: { field: 'name', detail: 'An organization role whose name looks the same already exists.', message: 'looks like a name already taken' },
  uq_organization_domains_org_domain: { field: 'domain', detail: 'The organization has claimed this domain already.' },
  uq_organization_domains_verified: { field: 'domain', detail: 'Another organization has verified this domain.' },
};

/** Runs a write, turning a unique violation of an organization table into CONFLICT. */
export async function mapOrganizationConflicts<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (pgErrorCode(err) === UNIQUE_VIOLATION) {
      const c = CONFLICTS[pgConstraint(err) ?? ''];
      if (c) throw AppError.conflict(c.detail, [{ field: c.field, message: c.message ?? 'is already taken' }]);
    }
    throw err;
  }
}

/** The directory's unique indexes, and the conflict (409) a caller sees when a write breaks one. */
import { AppError, UNIQUE_VIOLATION, pgConstraint, pgErrorCode } from '@iam/platform';

/** Unique indexes → the conflict the caller sees. */
const CONFLICTS: Record<string, { field: string; detail: string; message?: string }> = {
  uq_users_email_live: { field: 'email', detail: 'A user with this email already exists.' },
  uq_roles_name_live: { field: 'name', detail: 'A role with this name already exists.' },
  uq_permissions_name_live: { field: 'name', detail: 'A permission with this name already exists.' },
  uq_roles_name_skeleton_live: { field: 'name', detail: 'A role whose name looks the same already exists.', message: 'looks like a name already taken' },
  uq_permissions_name_skeleton_live: { field: 'name', detail: 'A permission whose name looks the same already exists.', message: 'looks like a name already taken' },
  uq_role_permissions_live: { field: 'permissionId', detail: 'The role already holds this permission.' },
  uq_scim_users_user_name: { field: 'userName', detail: 'A user of this organization already has this userName.' },
  uq_scim_users_external_id: { field: 'externalId', detail: 'A user of this SCIM connection already has this externalId.' },
  uq_organization_groups_display: { field: 'displayName', detail: 'A group of this organization already has this displayName.' },
  uq_organization_groups_external_id: { field: 'externalId', detail: 'A group of this SCIM connection already has this externalId.' },
};

/** Runs a write, turning a unique violation into CONFLICT. */
export async function mapConflicts<T>(fn: () => Promise<T>): Promise<T> {
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

import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000 } from '@iam/platform';
import { PasswordResetRow, PermissionRow, RolePermissionRow, RoleRow, UserRoleRow, UserRow } from './entities';
import { DirectorySchema1763800000100 } from './migrations/1763800000100-directory-schema';
import { ProductsManagePermission1764000000100 } from './migrations/1764000000100-products-manage-permission';
import { PasswordResets1764100000400 } from './migrations/1764100000400-password-resets';
import { AuditReadPermission1764200000100 } from './migrations/1764200000100-audit-read-permission';
import { UsersSearchIndex1764300000100 } from './migrations/1764300000100-users-search-index';
import { UsersSearchWords1764400000100 } from './migrations/1764400000100-users-search-words';
import { PasswordResetsChangedIndex1764500000200 } from './migrations/1764500000200-password-resets-changed-index';
import { NameSkeletons1764600000100 } from './migrations/1764600000100-name-skeletons';
import { ListSortIndexes1764700000300 } from './migrations/1764700000300-list-sort-indexes';
import { ClientsManagePermission1764800000200 } from './migrations/1764800000200-clients-manage-permission';
import { WebhooksManagePermission1766000000200 } from './migrations/1766000000200-webhooks-manage-permission';
import { Organizations1767000000100 } from './migrations/1767000000100-organizations';
import { organizationEntities } from './organization-entities';
import { UserImport1766200000300 } from './migrations/1766200000300-user-import';
import { Scim1767100000100 } from './migrations/1767100000100-scim';
import { IdentityProvidersManagePermission1766300000100 } from './migrations/1766300000100-identity-providers-manage-permission';

export const entities = [UserRow, RoleRow, PermissionRow, RolePermissionRow, UserRoleRow, PasswordResetRow, OutboxEventRow, ...organizationEntities];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, DirectorySchema1763800000100, ProductsManagePermission1764000000100, PasswordResets1764100000400, AuditReadPermission1764200000100, OutboxHeaders1764200000200, UsersSearchIndex1764300000100, UsersSearchWords1764400000100, PasswordResetsChangedIndex1764500000200, NameSkeletons1764600000100, ListSortIndexes1764700000300, ClientsManagePermission1764800000200, OutboxLease1764900000000, WebhooksManagePermission1766000000200, UserImport1766200000300, IdentityProvidersManagePermission1766300000100, Organizations1767000000100, Scim1767100000100];

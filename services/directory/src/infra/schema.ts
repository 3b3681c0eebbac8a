import { CreateOutbox1763800000000, OutboxEventRow } from '@iam/platform';
import { PermissionRow, RolePermissionRow, RoleRow, UserRoleRow, UserRow } from './entities';
import { DirectorySchema1763800000100 } from './migrations/1763800000100-directory-schema';
import { ProductsManagePermission1764000000100 } from './migrations/1764000000100-products-manage-permission';

export const entities = [UserRow, RoleRow, PermissionRow, RolePermissionRow, UserRoleRow, OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, DirectorySchema1763800000100, ProductsManagePermission1764000000100];

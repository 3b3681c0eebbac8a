/** Public webhook types made from the directory's events (users, roles, permissions, their links). */
import { SUBJECTS, decodeEvent, type EventSubject } from '../events';
import { type FieldChange, changesOf, type View } from './changes';
import { CHANGES, arr, bool, int, nullable, obj, str, uuid, type JsonSchema } from './schema';
import type { CatalogEntry } from './types';

const USER_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'emailVerified', 'roles'] as const;

interface UserLike {
  email: string;
  firstName: string;
  lastName: string;
  roles: readonly string[];
  phone?: number;
  emailVerified: boolean;
}
const userView = (u: UserLike): View => ({ email: u.email, firstName: u.firstName, lastName: u.lastName, phone: u.phone ?? null, emailVerified: u.emailVerified, roles: [...u.roles].sort() });

const USER = {
  id: uuid('The user id'),
  email: str(),
  firstName: str(),
  lastName: str(),
  phone: nullable(int()),
  emailVerified: bool(),
  roles: arr(str(), 'Role names, sorted'),
};
const exampleUser = { id: '5b0e2c51-3c55-4c3e-9b5e-3f7f2f6a8c11', email: 'ann@example.com', firstName: 'Ann', lastName: 'Lee', phone: 5550100, emailVerified: false, roles: ['Support'] };

const userEntries: CatalogEntry[] = [
  {
    type: 'user.created',
    version: 1,
    description: 'A user was created (by an administrator, or by sign-up).',
    subject: SUBJECTS.userCreated,
    schema: obj(USER),
    example: exampleUser,
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.userCreated, p);
      return { id: e.userId, ...userView(e) };
    },
  },
  {
    type: 'user.updated',
    version: 1,
    description: 'A user changed: profile, email, email verification, roles or password (a password only as a redacted change). `data` is the user after the change.',
    subject: SUBJECTS.userUpdated,
    schema: obj({ ...USER, changes: CHANGES }),
    example: { ...exampleUser, roles: ['Auditor', 'Support'], changes: [{ field: 'roles', before: ['Support'], after: ['Auditor', 'Support'] }] },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.userUpdated, p);
      const fields = e.changedFields.length > 0 ? e.changedFields : [...USER_FIELDS];
      const changes: FieldChange[] = changesOf(fields, e.before ? userView({ ...e.before, emailVerified: e.before.emailVerified }) : undefined, userView(e));
      return { id: e.userId, ...userView(e), changes };
    },
  },
  {
    type: 'user.deleted',
    version: 1,
    description: 'A user was deleted (soft: the id is never reused).',
    subject: SUBJECTS.userDeleted,
    schema: obj({ id: USER.id, email: str() }),
    example: { id: exampleUser.id, email: exampleUser.email },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.userDeleted, p);
      return { id: e.userId, email: e.email };
    },
  },
];

/** roles and permissions: a name and a description. */
function named(kind: 'role' | 'permission', subjects: Record<'created' | 'updated' | 'deleted', EventSubject>, example: { id: string; name: string; description: string }): CatalogEntry[] {
  const base: Record<string, JsonSchema> = { id: uuid(`The ${kind} id`), name: str(), description: str() };
  const decode = (subject: EventSubject, p: Uint8Array) => {
    const e = decodeEvent(subject as typeof SUBJECTS.roleCreated, p) as unknown as { roleId?: string; permissionId?: string; name: string; description: string; changedFields: string[]; before?: { name: string; description: string } };
    return { id: (kind === 'role' ? e.roleId : e.permissionId) ?? '', name: e.name, description: e.description, changedFields: e.changedFields, before: e.before };
  };
  return [
    {
      type: `${kind}.created`,
      version: 1,
      description: `A ${kind} was created.`,
      subject: subjects.created,
      schema: obj(base),
      example,
      toData: (p) => {
        const { id, name, description } = decode(subjects.created, p);
        return { id, name, description };
      },
    },
    {
      type: `${kind}.updated`,
      version: 1,
      description: `A ${kind}'s description changed${kind === 'role' ? ' or it was renamed' : ''}; \`data\` is the ${kind} after it.`,
      subject: subjects.updated,
      schema: obj({ ...base, changes: CHANGES }),
      example: { ...example, description: 'Reads everything', changes: [{ field: 'description', before: example.description, after: 'Reads everything' }] },
      toData: (p) => {
        const e = decode(subjects.updated, p);
        const now = { name: e.name, description: e.description };
        return { id: e.id, ...now, changes: changesOf(e.changedFields, e.before ? { name: e.before.name, description: e.before.description } : undefined, now) };
      },
    },
    {
      type: `${kind}.deleted`,
      version: 1,
      description: `A ${kind} was deleted (soft); its links to ${kind === 'role' ? 'permissions' : 'roles'} were revoked with it.`,
      subject: subjects.deleted,
      schema: obj(base),
      example,
      toData: (p) => {
        const { id, name, description } = decode(subjects.deleted, p);
        return { id, name, description };
      },
    },
  ];
}

const LINK = { linkId: uuid('The link id'), roleId: uuid(), roleName: str(), permissionId: uuid(), permissionName: str() };
const exampleLink = {
  linkId: '0d3b8c52-8f0a-4a51-a3f1-0c6a7c1b7e10',
  roleId: '8a7c3e1f-2b4d-4c6e-8f0a-1b2c3d4e5f60',
  roleName: 'Support',
  permissionId: '1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b',
  permissionName: 'users.manage',
};

const linkEntries: CatalogEntry[] = [
  {
    type: 'role.permission.granted',
    version: 1,
    description: 'A permission was linked to a role.',
    subject: SUBJECTS.rolePermissionCreated,
    schema: obj(LINK),
    example: exampleLink,
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.rolePermissionCreated, p);
      return { linkId: e.linkId, roleId: e.roleId, roleName: e.roleName, permissionId: e.permissionId, permissionName: e.permissionName };
    },
  },
  {
    type: 'role.permission.changed',
    version: 1,
    description: 'A role-permission link was changed to join another role or permission; `before` holds the ends it had.',
    subject: SUBJECTS.rolePermissionUpdated,
    schema: obj({ ...LINK, before: nullable(obj({ roleId: uuid(), roleName: str(), permissionId: uuid(), permissionName: str() })) }),
    example: { ...exampleLink, before: { roleId: '2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3d5f70', roleName: 'Auditor', permissionId: exampleLink.permissionId, permissionName: exampleLink.permissionName } },
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.rolePermissionUpdated, p);
      const b = e.before;
      return {
        linkId: e.linkId,
        roleId: e.roleId,
        roleName: e.roleName,
        permissionId: e.permissionId,
        permissionName: e.permissionName,
        before: b ? { roleId: b.roleId, roleName: b.roleName, permissionId: b.permissionId, permissionName: b.permissionName } : null,
      };
    },
  },
  {
    type: 'role.permission.revoked',
    version: 1,
    description: 'A permission was unlinked from a role.',
    subject: SUBJECTS.rolePermissionDeleted,
    schema: obj(LINK),
    example: exampleLink,
    toData: (p) => {
      const e = decodeEvent(SUBJECTS.rolePermissionDeleted, p);
      return { linkId: e.linkId, roleId: e.roleId, roleName: e.roleName, permissionId: e.permissionId, permissionName: e.permissionName };
    },
  },
];

export const DIRECTORY_TYPES: readonly CatalogEntry[] = [
  ...userEntries,
  ...named('role', { created: SUBJECTS.roleCreated, updated: SUBJECTS.roleUpdated, deleted: SUBJECTS.roleDeleted }, { id: '8a7c3e1f-2b4d-4c6e-8f0a-1b2c3d4e5f60', name: 'Support', description: 'Helps users' }),
  ...named('permission', { created: SUBJECTS.permissionCreated, updated: SUBJECTS.permissionUpdated, deleted: SUBJECTS.permissionDeleted }, { id: '1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b', name: 'reports.read', description: 'Reads reports' }),
  ...linkEntries,
];

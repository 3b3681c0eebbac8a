/**
 * Role and permission use cases. The two share their shape (name unique case-insensitively among
 * live records, and so is its lookalike key; description, soft delete); deleting either also
 * revokes its role-permission links.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, type NewEvent } from '@iam/platform';
import { ADMINISTRATOR_ROLE, type ListQuery, type Page, type Permission, type Role, type RolePermission } from '../domain/model';
import { BUILTIN_PERMISSIONS, assertNotBuiltin } from '../domain/authorization';
import type { Stores, UnitOfWork } from '../domain/ports';
import { Violations, checkDescription, checkId, checkIdentifierName } from '../domain/rules';

export interface NamedInput {
  name?: string;
  description?: string;
}

export interface NamedUseCases<T> {
  create(input: { name: string; description?: string }): Promise<T>;
  get(id: string): Promise<T>;
  update(id: string, input: NamedInput): Promise<T>;
  remove(id: string): Promise<void>;
  list(query: ListQuery): Promise<Page<T>>;
}

type Kind = 'role' | 'permission';

const EVENTS = {
  role: { created: SUBJECTS.roleCreated, updated: SUBJECTS.roleUpdated, deleted: SUBJECTS.roleDeleted },
  permission: { created: SUBJECTS.permissionCreated, updated: SUBJECTS.permissionUpdated, deleted: SUBJECTS.permissionDeleted },
} as const;

type Named = { id: string; name: string; description: string };

/** The event of a change; `before` is the record as an update found it. */
function namedEvent(kind: Kind, verb: 'created' | 'updated' | 'deleted', r: Named, changedFields: string[] = [], before?: Named): NewEvent {
  const fields = { name: r.name, description: r.description, changedFields, before: before && { name: before.name, description: before.description } };
  return kind === 'role' ? event(EVENTS.role[verb], { roleId: r.id, ...fields }) : event(EVENTS.permission[verb], { permissionId: r.id, ...fields });
}

export function linkRevokedEvent(l: RolePermission): NewEvent {
  return event(SUBJECTS.rolePermissionDeleted, {
    linkId: l.id,
    roleId: l.roleId,
    permissionId: l.permissionId,
    roleName: l.roleName,
    permissionName: l.permissionName,
    before: undefined,
  });
}

/** The built-in names a new or renamed role or permission may not look like (400; DESIGN §3). */
const BUILTINS: Readonly<Record<Kind, { kind: string; names: readonly string[] }>> = {
  role: { kind: 'role', names: [ADMINISTRATOR_ROLE] },
  permission: { kind: 'permission', names: BUILTIN_PERMISSIONS },
};

function validate(kind: Kind, input: NamedInput, requireName: boolean): { name?: string; description?: string } {
  const v = new Violations();
  const out: { name?: string; description?: string } = {};
  if (input.name !== undefined || requireName) out.name = checkIdentifierName(v, 'name', input.name ?? '', BUILTINS[kind]);
  if (input.description !== undefined) out.description = checkDescription(v, 'description', input.description);
  v.throwIfAny();
  return out;
}

/**
 * `uow` runs transactions (the records, and the links a deletion revokes), `stores` reads outside
 * any; `S` is the one store of the kind.
 */
export interface NamedDeps<S> {
  readonly uow: UnitOfWork<S & Pick<Stores, 'links'>>;
  readonly stores: S;
}

function namedUseCases<T extends Named, S>(kind: Kind, deps: NamedDeps<S>, store: (s: S) => Stores['roles'] | Stores['permissions']): NamedUseCases<T> {
  const label = kind === 'role' ? 'role' : 'permission';
  const notFound = () => AppError.notFound(`The ${label} does not exist.`);
  return {
    async create(input) {
      const { name, description } = validate(kind, input, true);
      return deps.uow.run(async (tx) => {
        const id = randomUUID();
        await store(tx).insert({ id, name: name!, description: description ?? '' });
        const created = (await store(tx).findById(id)) as unknown as T;
        await tx.publish([namedEvent(kind, 'created', created)]);
        return created;
      });
    },

    async get(id) {
      const found = await store(deps.stores).findById(checkId(id));
      if (!found) throw notFound();
      return found as unknown as T;
    },

    async update(id, input) {
      checkId(id);
      const patch = validate(kind, input, false);
      return deps.uow.run(async (tx) => {
        const before = await store(tx).findById(id, { forUpdate: true });
        if (!before) throw notFound();
        if (patch.name !== undefined && patch.name !== before.name) {
          // Policies and other services check permissions by name: a rename would make one
          // permission become another. Roles may be renamed, but not Administrator.
          if (kind === 'permission') throw AppError.conflict('Permission names cannot be changed; only the description can.', [{ field: 'name', message: 'is immutable' }]);
          assertNotBuiltin(kind, before.name, 'renamed');
        }
        await store(tx).update(id, patch);
        const after = (await store(tx).findById(id)) as unknown as T;
        const fields = Object.keys(patch);
        if (fields.length > 0) await tx.publish([namedEvent(kind, 'updated', after, fields, before)]);
        return after;
      });
    },

    async remove(id) {
      checkId(id);
      await deps.uow.run(async (tx) => {
        const found = await store(tx).findById(id, { forUpdate: true });
        if (!found) throw notFound();
        assertNotBuiltin(kind, found.name, 'deleted');
        if (!(await store(tx).softDelete(id))) throw notFound();
        const revoked = await tx.links.revokeAllOf(kind === 'role' ? { roleId: id } : { permissionId: id });
        await tx.publish([namedEvent(kind, 'deleted', found), ...revoked.map(linkRevokedEvent)]);
      });
    },

    list: async (query) => (await store(deps.stores).list(query)) as unknown as Page<T>,
  };
}

export function createRoleUseCases(deps: NamedDeps<Pick<Stores, 'roles'>>): NamedUseCases<Role> {
  return namedUseCases<Role, Pick<Stores, 'roles'>>('role', deps, (s) => s.roles);
}

export function createPermissionUseCases(deps: NamedDeps<Pick<Stores, 'permissions'>>): NamedUseCases<Permission> {
  return namedUseCases<Permission, Pick<Stores, 'permissions'>>('permission', deps, (s) => s.permissions);
}

import { AppError } from '@iam/platform';
import type { Principal } from '../domain/model';
import type { Directory } from '../domain/ports';
import { clientRights } from './client-rights';

const PERMISSIONS = [
  { name: 'users.manage', description: 'Manage users' },
  { name: 'audit.read', description: 'Read the audit trail' },
];
const ROLES = [{ name: 'Support', permissions: ['users.manage'] }];

const principal = (roles: string[], permissions: string[]): Principal => ({ userId: 'u', firstName: '', lastName: '', email: '', roles, permissions, emailVerified: true });
const people: Record<string, Principal> = {
  admin: principal(['Administrator'], []),
  manager: principal(['Managers'], ['clients.manage', 'users.manage']),
  nobody: principal([], ['users.manage']),
};

const directory: Pick<Directory, 'principal' | 'resolveRoles' | 'resolvePermissions'> = {
  principal: async (id) => people[id] ?? null,
  resolveRoles: async (names) => ROLES.filter((r) => names.some((n) => n.toLowerCase() === r.name.toLowerCase())),
  resolvePermissions: async (names) => PERMISSIONS.filter((p) => names.some((n) => n.toLowerCase() === p.name.toLowerCase())),
};

const code = (p: Promise<unknown> | (() => unknown)) =>
  (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => 'ok',
    (err: unknown) => (err instanceof AppError ? `${err.code} ${(err.errors ?? []).map((e) => e.field).join(',')}`.trim() : String(err)),
  );

describe('clientRights: who may give a client API permissions', () => {
  const rights = clientRights(directory);

  it('clients.manage (or Administrator) to write at all, as the directory holds it now', async () => {
    expect(await code(rights.of({ userId: 'nobody' }))).toBe('FORBIDDEN');
    expect(await code(rights.of({ userId: 'gone' }))).toBe('FORBIDDEN');
    expect(await code(rights.of({ userId: 'manager' }))).toBe('ok');
  });

  it('names resolve to the directory’s spelling; unknown ones are a 400 on apiPermissions', async () => {
    expect(await rights.permissions(['USERS.manage', 'audit.read'])).toEqual(['users.manage', 'audit.read']);
    expect(await code(rights.permissions(['users.manage', 'no.such']))).toBe('VALIDATION apiPermissions');
  });

  it('a non-Administrator lists only what it holds, and acts only on clients whose live ceiling it holds', async () => {
    const manager = await rights.of({ userId: 'manager' });
    const admin = await rights.of({ userId: 'admin' });
    expect(await code(() => rights.assertMayList(manager, ['users.manage'], 'give API permissions to'))).toBe('ok');
    expect(await code(() => rights.assertMayList(manager, ['users.manage', 'audit.read'], 'give API permissions to'))).toBe('FORBIDDEN');
    expect(await code(() => rights.assertMayList(admin, ['users.manage', 'audit.read'], 'give API permissions to'))).toBe('ok');
    expect(await code(rights.assertMayActOn(manager, { roles: ['Support'], apiPermissions: ['users.manage'], resourceServer: false }, 'change'))).toBe('ok');
    expect(await code(rights.assertMayActOn(manager, { roles: [], apiPermissions: ['audit.read'], resourceServer: false }, 'change'))).toBe('FORBIDDEN');
    // A permission deleted since carries nothing.
    expect(await code(rights.assertMayActOn(manager, { roles: [], apiPermissions: ['deleted.since'], resourceServer: false }, 'change'))).toBe('ok');
    expect(await code(rights.assertMayActOn(admin, { roles: ['Support'], apiPermissions: ['audit.read'], resourceServer: false }, 'delete'))).toBe('ok');
  });

  it('only an Administrator makes a client a resource server, or acts on one', async () => {
    const manager = await rights.of({ userId: 'manager' });
    const admin = await rights.of({ userId: 'admin' });
    expect(await code(() => rights.assertMayMakeResourceServer(manager))).toBe('FORBIDDEN');
    expect(await code(() => rights.assertMayMakeResourceServer(admin))).toBe('ok');
    for (const what of ['change', 'delete', 'rotate the secret of']) {
      expect(await code(rights.assertMayActOn(manager, { roles: [], apiPermissions: [], resourceServer: true }, what))).toBe('FORBIDDEN');
      expect(await code(rights.assertMayActOn(admin, { roles: [], apiPermissions: [], resourceServer: true }, what))).toBe('ok');
    }
  });
});

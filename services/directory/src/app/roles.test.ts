/**
 * The role and permission use cases against the real PostgreSQL, through the composition root:
 * names unique case-insensitively and by lookalike key among live records, built-ins neither
 * imitated, renamed nor deleted, permission names immutable, soft delete revoking the record's
 * links in the same transaction, and the event of each change in the outbox (none when refused).
 */
import { SUBJECTS } from '@iam/contracts';
import { randomInt } from 'node:crypto';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import { directoryFixture, refusal, unique } from '../testing/app-fixture';

describe('role and permission use cases', () => {
  const fx = directoryFixture('directory_app_roles');

  it('creates a role and a permission, each with its event', async () => {
    const role = await fx.uc.roles.create({ name: ` auditors-${unique()} `, description: 'Read the trail' });
    expect(role).toEqual({ id: expect.any(String), name: role.name, description: 'Read the trail', permissions: [], createdAt: expect.any(Date), updatedAt: expect.any(Date), deletedAt: null });
    expect(role.name).toMatch(/^auditors-[0-9a-f]{8}$/);
    const permission = await fx.uc.permissions.create({ name: `trail.read.${unique()}` });
    expect(permission).toMatchObject({ name: permission.name, description: '', deletedAt: null });
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.roleCreated, payload: expect.objectContaining({ roleId: role.id, name: role.name, description: 'Read the trail' }) },
      { subject: SUBJECTS.permissionCreated, payload: expect.objectContaining({ permissionId: permission.id, name: permission.name }) },
    ]);
  });

  it('refuses a taken name (any case), a lookalike of a taken one, and a lookalike of a built-in, writing nothing', async () => {
    const digits = String(randomInt(1e9));
    const name = `ABC-${digits}`;
    await fx.uc.roles.create({ name });
    await fx.newEvents();
    expect(await refusal(fx.uc.roles.create({ name: name.toLowerCase() }))).toEqual({ code: 'CONFLICT', fields: ['name'] });
    // Cyrillic АВС: another name, the same lookalike key.
    expect(await refusal(fx.uc.roles.create({ name: `\u0410\u0412\u0421-${digits}` }))).toEqual({ code: 'CONFLICT', fields: ['name'] });
    expect(await refusal(fx.uc.roles.create({ name: 'Adrninistrator' }))).toEqual({ code: 'VALIDATION', fields: ['name'] });
    expect(await refusal(fx.uc.permissions.create({ name: 'users.rnanage' }))).toEqual({ code: 'VALIDATION', fields: ['name'] });
    expect(await refusal(fx.uc.permissions.create({ name: '' }))).toEqual({ code: 'VALIDATION', fields: ['name'] });
    expect(await fx.newEvents()).toEqual([]);
  });

  it('a role may be renamed (event with the name before), a permission only described; built-ins keep their names', async () => {
    const role = await fx.uc.roles.create({ name: `support-${unique()}` });
    await fx.newEvents();
    const renamed = await fx.uc.roles.update(role.id, { name: `helpdesk-${unique()}` });
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.roleUpdated, payload: expect.objectContaining({ name: renamed.name, changedFields: ['name'], before: { name: role.name, description: '' } }) },
    ]);
    const permission = await fx.uc.permissions.create({ name: `tickets.close.${unique()}` });
    expect(await refusal(fx.uc.permissions.update(permission.id, { name: `tickets.open.${unique()}` }))).toEqual({ code: 'CONFLICT', fields: ['name'] });
    expect(await fx.uc.permissions.update(permission.id, { description: 'Close tickets' })).toMatchObject({ name: permission.name, description: 'Close tickets' });
    const admin = await fx.administratorRole();
    expect(await refusal(fx.uc.roles.update(admin.id, { name: `root-${unique()}` }))).toEqual({ code: 'CONFLICT', fields: [] });
    expect(await fx.uc.roles.update(admin.id, { description: 'Superuser' })).toMatchObject({ name: ADMINISTRATOR_ROLE, description: 'Superuser' });
  });

  it('deleting a role or a permission revokes its links in the same transaction, with their events', async () => {
    const role = await fx.uc.roles.create({ name: `temps-${unique()}` });
    const keep = await fx.uc.roles.create({ name: `staff-${unique()}` });
    const [p1, p2] = [await fx.permissionId(`rota.read.${unique()}`), await fx.permissionId(`rota.write.${unique()}`)];
    const links = [
      await fx.uc.links.create(fx.admin, { roleId: role.id, permissionId: p1 }),
      await fx.uc.links.create(fx.admin, { roleId: role.id, permissionId: p2 }),
      await fx.uc.links.create(fx.admin, { roleId: keep.id, permissionId: p2 }),
    ];
    await fx.newEvents();
    await fx.uc.roles.remove(role.id);
    const events = await fx.newEvents();
    expect(events.map((e) => e.subject).sort()).toEqual([SUBJECTS.roleDeleted, SUBJECTS.rolePermissionDeleted, SUBJECTS.rolePermissionDeleted].sort());
    expect(events.filter((e) => e.subject === SUBJECTS.rolePermissionDeleted).map((e) => e.payload.linkId).sort()).toEqual([links[0]!.id, links[1]!.id].sort());
    expect(await refusal(fx.uc.roles.get(role.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await refusal(fx.uc.roles.remove(role.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await refusal(fx.uc.links.get(links[0]!.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    // The permission's deletion revokes the link left, and the role no longer lists it.
    await fx.uc.permissions.remove(p2);
    expect((await fx.newEvents()).map((e) => e.payload.linkId).filter(Boolean)).toEqual([links[2]!.id]);
    expect((await fx.uc.roles.get(keep.id)).permissions).toEqual([]);
    // The names are free again.
    await expect(fx.uc.roles.create({ name: role.name })).resolves.toMatchObject({ name: role.name });
  });

  it('built-ins cannot be deleted', async () => {
    const admin = await fx.administratorRole();
    expect(await refusal(fx.uc.roles.remove(admin.id))).toEqual({ code: 'CONFLICT', fields: [] });
    expect(await refusal(fx.uc.permissions.remove(await fx.permissionId('users.manage')))).toEqual({ code: 'CONFLICT', fields: [] });
    expect((await fx.uc.roles.get(admin.id)).permissions).toContain('users.manage');
    expect(await fx.newEvents()).toEqual([]);
  });

  it('lists roles with their permissions, deleted ones only on request', async () => {
    const tag = unique();
    const role = await fx.uc.roles.create({ name: `listed-${tag}` });
    await fx.uc.links.create(fx.admin, { roleId: role.id, permissionId: await fx.permissionId(`listed.read.${tag}`) });
    const gone = await fx.uc.roles.create({ name: `listed-gone-${tag}` });
    await fx.uc.roles.remove(gone.id);
    const live = await fx.uc.roles.list({ page: 1, pageSize: 10, q: tag, includeDeleted: false });
    expect(live).toMatchObject({ totalCount: 1, items: [{ id: role.id, permissions: [`listed.read.${tag}`] }] });
    expect((await fx.uc.roles.list({ page: 1, pageSize: 10, q: tag, includeDeleted: true })).items.map((r) => r.id)).toEqual([role.id, gone.id]);
    expect((await fx.uc.permissions.list({ page: 1, pageSize: 10, q: `listed.read.${tag}`, includeDeleted: false })).totalCount).toBe(1);
  });
});

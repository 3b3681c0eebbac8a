/**
 * The role-permission link use cases against the real PostgreSQL, through the composition root:
 * links only between live records (400 otherwise), one live link per pair (409), the grant rules
 * (a non-Administrator links only permissions it holds, never to Administrator; moving a link
 * needs both), Administrator's built-in links never revoked, and each change's event in the outbox.
 */
import { SUBJECTS } from '@iam/contracts';
import { randomUUID } from 'node:crypto';
import type { Role } from '../domain/model';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import { directoryFixture, refusal, unique } from '../testing/app-fixture';

describe('role-permission link use cases', () => {
  const fx = directoryFixture('directory_app_links');
  let administrator: Role;
  const role = () => fx.uc.roles.create({ name: `team-${unique()}` });

  beforeAll(async () => {
    administrator = await fx.administratorRole();
  });

  it('grants a permission to a role (names on the link and the event); the role then lists it', async () => {
    const r = await role();
    const permissionId = await fx.permissionId(`docs.read.${unique()}`);
    await fx.newEvents();
    const link = await fx.uc.links.create(fx.admin, { roleId: r.id.toUpperCase(), permissionId });
    expect(link).toMatchObject({ roleId: r.id, permissionId, roleName: r.name });
    expect(await fx.uc.links.get(link.id)).toEqual(link);
    expect((await fx.uc.roles.get(r.id)).permissions).toEqual([link.permissionName]);
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.rolePermissionCreated, payload: expect.objectContaining({ linkId: link.id, roleName: r.name, permissionName: link.permissionName, before: undefined }) },
    ]);
  });

  it('refuses a second live link of the pair (CONFLICT), ends that do not exist or are deleted (VALIDATION), and ids that are not UUIDs', async () => {
    const r = await role();
    const permissionId = await fx.permissionId(`docs.write.${unique()}`);
    await fx.uc.links.create(fx.admin, { roleId: r.id, permissionId });
    await fx.newEvents();
    expect(await refusal(fx.uc.links.create(fx.admin, { roleId: r.id, permissionId }))).toEqual({ code: 'CONFLICT', fields: ['permissionId'] });
    expect(await refusal(fx.uc.links.create(fx.admin, { roleId: randomUUID(), permissionId: randomUUID() }))).toEqual({ code: 'VALIDATION', fields: ['roleId', 'permissionId'] });
    const gone = await role();
    await fx.uc.roles.remove(gone.id);
    await fx.newEvents();
    expect(await refusal(fx.uc.links.create(fx.admin, { roleId: gone.id, permissionId }))).toEqual({ code: 'VALIDATION', fields: ['roleId'] });
    expect(await refusal(fx.uc.links.create(fx.admin, { roleId: 'x', permissionId }))).toEqual({ code: 'VALIDATION', fields: ['roleId'] });
    expect(await refusal(fx.uc.links.list({ page: 1, pageSize: 10, includeDeleted: false }, { permissionId: 'x' }))).toEqual({ code: 'VALIDATION', fields: ['permissionId'] });
    expect(await fx.newEvents()).toEqual([]);
  });

  it('a non-Administrator grants only permissions it holds, and never to Administrator', async () => {
    const held = `held.${unique()}`;
    const caller = await fx.actorHolding('role-permissions.manage', held);
    const r = await role();
    const other = await fx.permissionId(`other.${unique()}`);
    await fx.newEvents();
    expect(await refusal(fx.uc.links.create(caller, { roleId: r.id, permissionId: other }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.links.create(caller, { roleId: administrator.id, permissionId: await fx.permissionId(held) }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
    await expect(fx.uc.links.create(caller, { roleId: r.id, permissionId: await fx.permissionId(held) })).resolves.toMatchObject({ permissionName: held });
    // A caller that is nobody holds nothing.
    expect(await refusal(fx.uc.links.create({ userId: randomUUID() }, { roleId: r.id, permissionId: other }))).toEqual({ code: 'FORBIDDEN', fields: [] });
  });

  it('moving a link needs the right to revoke the old grant and to make the new one; the event carries the link before', async () => {
    const held = `move.held.${unique()}`;
    const caller = await fx.actorHolding('role-permissions.manage', held);
    const [from, to] = [await role(), await role()];
    const link = await fx.uc.links.create(fx.admin, { roleId: from.id, permissionId: await fx.permissionId(held) });
    const unheld = await fx.uc.links.create(fx.admin, { roleId: from.id, permissionId: await fx.permissionId(`move.other.${unique()}`) });
    await fx.newEvents();
    expect(await refusal(fx.uc.links.update(caller, unheld.id, { roleId: to.id }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.links.update(caller, link.id, { roleId: administrator.id }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
    const moved = await fx.uc.links.update(caller, link.id, { roleId: to.id });
    expect(moved).toMatchObject({ id: link.id, roleId: to.id, roleName: to.name, permissionName: held });
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.rolePermissionUpdated, payload: expect.objectContaining({ linkId: link.id, roleName: to.name, before: expect.objectContaining({ roleId: from.id, roleName: from.name }) }) },
    ]);
    expect((await fx.uc.roles.get(from.id)).permissions).toEqual([unheld.permissionName]);
  });

  it('revoking: Administrator built-in links never (CONFLICT), its other links only by an Administrator; a revoked link is gone', async () => {
    const builtin = (await fx.uc.links.list({ page: 1, pageSize: 10, q: 'users.manage', includeDeleted: false }, { roleId: administrator.id })).items[0]!;
    expect(await refusal(fx.uc.links.remove(fx.admin, builtin.id))).toEqual({ code: 'CONFLICT', fields: [] });
    const extra = await fx.uc.links.create(fx.admin, { roleId: administrator.id, permissionId: await fx.permissionId(`admin.extra.${unique()}`) });
    const caller = await fx.actorHolding('role-permissions.manage', extra.permissionName);
    expect(await refusal(fx.uc.links.remove(caller, extra.id))).toEqual({ code: 'FORBIDDEN', fields: [] });
    await fx.newEvents();
    await fx.uc.links.remove(fx.admin, extra.id);
    expect(await fx.newEvents()).toEqual([{ subject: SUBJECTS.rolePermissionDeleted, payload: expect.objectContaining({ linkId: extra.id, roleName: ADMINISTRATOR_ROLE }) }]);
    expect(await refusal(fx.uc.links.get(extra.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await refusal(fx.uc.links.remove(fx.admin, extra.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    // The pair may be linked again.
    await expect(fx.uc.links.create(fx.admin, { roleId: administrator.id, permissionId: extra.permissionId })).resolves.toMatchObject({ permissionId: extra.permissionId });
  });

  it('lists live links, narrowed to one end', async () => {
    const r = await role();
    const made = [];
    for (const n of ['a', 'b', 'c']) made.push(await fx.uc.links.create(fx.admin, { roleId: r.id, permissionId: await fx.permissionId(`listing.${n}.${unique()}`) }));
    await fx.uc.links.remove(fx.admin, made[1]!.id);
    const page = await fx.uc.links.list({ page: 1, pageSize: 10, includeDeleted: false }, { roleId: r.id });
    expect(page).toMatchObject({ totalCount: 2, items: [{ id: made[0]!.id }, { id: made[2]!.id }] });
    const byPermission = await fx.uc.links.list({ page: 1, pageSize: 10, includeDeleted: false }, { permissionId: made[2]!.permissionId });
    expect(byPermission.items.map((l) => l.id)).toEqual([made[2]!.id]);
  });
});

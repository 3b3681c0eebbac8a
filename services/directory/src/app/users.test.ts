/**
 * The user use cases against the real PostgreSQL, through the composition root: create, read,
 * update (fields given replace, absent stay), soft delete and list; conflicts; the grant rules
 * (a role only by a caller holding all its permissions), the Administrator rules (only an
 * Administrator assigns it or touches its holders; never the last one); and the event each
 * change writes to the outbox in its transaction (none for a refused change or for no change).
 */
import { SUBJECTS } from '@iam/contracts';
import { randomUUID } from 'node:crypto';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import { directoryFixture, PASSWORD, refusal, unique } from '../testing/app-fixture';

describe('user use cases', () => {
  const fx = directoryFixture('directory_app_users');
  const person = (over: Record<string, unknown> = {}) => ({ firstName: 'Ada', lastName: 'Lovelace', email: `ada-${unique()}@example.com`, password: PASSWORD, ...over });

  it('creates a user (email trimmed and lower-cased, no hash anywhere) and writes directory.user.created', async () => {
    const input = person({ email: `  Ada.${unique()}@Example.COM `, phone: 441234567, roles: [] });
    const user = await fx.uc.users.create(fx.admin, input);
    expect(user).toEqual({
      id: expect.any(String),
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: input.email.trim().toLowerCase(),
      phone: 441234567,
      emailVerified: false,
      roles: [],
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
      deletedAt: null,
    });
    expect(await fx.uc.users.get(user.id)).toEqual(user);
    const events = await fx.newEvents();
    expect(events).toEqual([{ subject: SUBJECTS.userCreated, payload: expect.objectContaining({ userId: user.id, email: user.email, changedFields: [], before: undefined }) }]);
    expect(JSON.stringify(events)).not.toMatch(/argon2|passwordHash/);
  });

  it('refuses a taken email (case-insensitively), a weak password and an unknown role, writing nothing', async () => {
    const first = await fx.uc.users.create(fx.admin, person());
    await fx.newEvents();
    expect(await refusal(fx.uc.users.create(fx.admin, person({ email: first.email.toUpperCase() })))).toEqual({ code: 'CONFLICT', fields: ['email'] });
    expect(await refusal(fx.uc.users.create(fx.admin, person({ password: 'short' })))).toEqual({ code: 'VALIDATION', fields: ['password'] });
    const email = `nobody-${unique()}@example.com`;
    expect(await refusal(fx.uc.users.create(fx.admin, person({ email, roles: ['no-such-role'] })))).toEqual({ code: 'VALIDATION', fields: ['roles'] });
    expect((await fx.uc.users.list({ page: 1, pageSize: 10, q: email, includeDeleted: true })).totalCount).toBe(0);
    expect(await fx.newEvents()).toEqual([]);
  });

  it('updates only the fields given; a new email is unverified; no change writes no event', async () => {
    const user = await fx.uc.users.create(fx.admin, person({ phone: 123 }));
    await fx.uc.credentials.markEmailVerified(user.id);
    await fx.newEvents();
    const email = `lovelace-${unique()}@example.com`;
    const updated = await fx.uc.users.update(fx.admin, user.id, { lastName: 'King', email });
    expect(updated).toMatchObject({ firstName: 'Ada', lastName: 'King', email, phone: 123, emailVerified: false });
    const [changed] = await fx.newEvents();
    expect(changed).toEqual({
      subject: SUBJECTS.userUpdated,
      payload: expect.objectContaining({ changedFields: ['lastName', 'email', 'emailVerified'], email, before: expect.objectContaining({ lastName: 'Lovelace', email: user.email, emailVerified: true }) }),
    });
    // The same values again, and phone cleared.
    await fx.uc.users.update(fx.admin, user.id, { lastName: 'King' });
    expect(await fx.newEvents()).toEqual([]);
    expect(await fx.uc.users.update(fx.admin, user.id, { phone: null })).toMatchObject({ phone: null });
    // A new password: named in the event, never its value; the old one stops working.
    await fx.uc.users.update(fx.admin, user.id, { password: 'Another-Horse-7' });
    expect((await fx.newEvents()).map((e) => e.payload.changedFields)).toEqual([['phone'], ['password']]);
    expect((await fx.uc.credentials.verify(email, PASSWORD)).principal).toBeNull();
    expect((await fx.uc.credentials.verify(email, 'Another-Horse-7')).principal).toMatchObject({ userId: user.id });
  });

  it('soft delete: gone from reads and lists (unless includeDeleted), a second delete is NOT_FOUND; the email is free again', async () => {
    const user = await fx.uc.users.create(fx.admin, person());
    await fx.newEvents();
    await fx.uc.users.remove(fx.admin, user.id);
    expect(await fx.newEvents()).toEqual([{ subject: SUBJECTS.userDeleted, payload: expect.objectContaining({ userId: user.id, email: user.email }) }]);
    expect(await refusal(fx.uc.users.get(user.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await fx.uc.users.get(user.id, { includeDeleted: true })).toMatchObject({ id: user.id, email: user.email, deletedAt: expect.any(Date) });
    expect(await refusal(fx.uc.users.remove(fx.admin, user.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await refusal(fx.uc.users.update(fx.admin, user.id, { firstName: 'X' }))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect((await fx.uc.users.list({ page: 1, pageSize: 10, q: user.email, includeDeleted: false })).items).toEqual([]);
    expect((await fx.uc.users.list({ page: 1, pageSize: 10, q: user.email, includeDeleted: true })).items).toEqual([expect.objectContaining({ id: user.id, deletedAt: expect.any(Date) })]);
    await expect(fx.uc.users.create(fx.admin, person({ email: user.email }))).resolves.toMatchObject({ email: user.email });
    expect(await fx.newEvents()).toHaveLength(1);
  });

  it('ids that are not UUIDs are VALIDATION, unknown ones NOT_FOUND', async () => {
    expect(await refusal(fx.uc.users.get('not-a-uuid'))).toEqual({ code: 'VALIDATION', fields: ['id'] });
    expect(await refusal(fx.uc.users.get(randomUUID()))).toEqual({ code: 'NOT_FOUND', fields: [] });
  });

  it('a role is assigned only by a caller holding every permission of it', async () => {
    const caller = await fx.actorHolding('users.manage', 'reports.read');
    const readers = await fx.uc.roles.create({ name: `readers-${unique()}` });
    const writers = await fx.uc.roles.create({ name: `writers-${unique()}` });
    await fx.uc.links.create(fx.admin, { roleId: readers.id, permissionId: await fx.permissionId('reports.read') });
    await fx.uc.links.create(fx.admin, { roleId: writers.id, permissionId: await fx.permissionId('reports.write') });
    await fx.newEvents();
    expect(await refusal(fx.uc.users.create(caller, person({ roles: [writers.name] })))).toEqual({ code: 'FORBIDDEN', fields: [] });
    const user = await fx.uc.users.create(caller, person({ roles: [readers.name] }));
    expect(user.roles).toEqual([readers.name]);
    expect(await refusal(fx.uc.users.update(caller, user.id, { roles: [readers.name, writers.name] }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect((await fx.uc.users.get(user.id)).roles).toEqual([readers.name]);
    expect((await fx.newEvents()).map((e) => e.subject)).toEqual([SUBJECTS.userCreated]);
    // Nor may it change a user holding a permission it lacks.
    const writer = await fx.uc.users.create(fx.admin, person({ roles: [writers.name] }));
    expect(await refusal(fx.uc.users.update(caller, writer.id, { firstName: 'Eve' }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.users.remove(caller, writer.id))).toEqual({ code: 'FORBIDDEN', fields: [] });
    // A caller that is nobody holds nothing.
    expect(await refusal(fx.uc.users.create({ userId: randomUUID() }, person({ roles: [readers.name] })))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.users.create({ userId: 'not-a-uuid' }, person({ roles: [readers.name] })))).toEqual({ code: 'FORBIDDEN', fields: [] });
  });

  it('only an Administrator assigns Administrator or changes, deletes or demotes one', async () => {
    const caller = await fx.actorHolding(...['users.manage', 'roles.manage', 'permissions.manage', 'role-permissions.manage', 'products.manage', 'audit.read', 'clients.manage', 'webhooks.manage', 'organizations.manage', 'identity-providers.manage']);
    expect(await refusal(fx.uc.users.create(caller, person({ roles: [ADMINISTRATOR_ROLE] })))).toEqual({ code: 'FORBIDDEN', fields: [] });
    const admin2 = await fx.uc.users.create(fx.admin, person({ roles: [ADMINISTRATOR_ROLE] }));
    await fx.newEvents();
    expect(await refusal(fx.uc.users.update(caller, admin2.id, { firstName: 'Mallory' }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.users.update(caller, admin2.id, { roles: [] }))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await refusal(fx.uc.users.remove(caller, admin2.id))).toEqual({ code: 'FORBIDDEN', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
    // An Administrator may demote another one: the event names the roles change, with the roles before.
    const demoted = await fx.uc.users.update(fx.admin, admin2.id, { roles: [] });
    expect(demoted.roles).toEqual([]);
    expect(await fx.newEvents()).toEqual([{ subject: SUBJECTS.userUpdated, payload: expect.objectContaining({ changedFields: ['roles'], roles: [], before: expect.objectContaining({ roles: [ADMINISTRATOR_ROLE] }) }) }]);
  });

  it('the last active Administrator can neither be deleted nor lose the role (CONFLICT); with two, one may go', async () => {
    const [other] = await fx.ds.query<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM user_roles ur JOIN roles r ON r.id = ur.role_id JOIN users u ON u.id = ur.user_id
        WHERE r.name = $1 AND u.deleted_at IS NULL AND u.id <> $2`,
      [ADMINISTRATOR_ROLE, fx.admin.userId],
    );
    expect(Number(other!.n)).toBe(0);
    expect(await refusal(fx.uc.users.remove(fx.admin, fx.admin.userId))).toEqual({ code: 'CONFLICT', fields: [] });
    expect(await refusal(fx.uc.users.update(fx.admin, fx.admin.userId, { roles: [] }))).toEqual({ code: 'CONFLICT', fields: [] });
    expect((await fx.uc.users.get(fx.admin.userId)).roles).toEqual([ADMINISTRATOR_ROLE]);
    expect(await fx.newEvents()).toEqual([]);
    const second = await fx.uc.users.create(fx.admin, person({ roles: [ADMINISTRATOR_ROLE] }));
    await fx.uc.users.remove(fx.admin, second.id);
    expect(await refusal(fx.uc.users.remove({ userId: fx.admin.userId }, fx.admin.userId))).toEqual({ code: 'CONFLICT', fields: [] });
  });

  it('lists in (createdAt, id) order, pages, and searches case-insensitively and literally', async () => {
    const tag = unique();
    const made = [];
    for (const name of ['Alpha', 'Bravo', 'Charlie']) made.push(await fx.uc.users.create(fx.admin, person({ firstName: name, email: `${name.toLowerCase()}-${tag}@example.com` })));
    const page = (p: number, q = tag) => fx.uc.users.list({ page: p, pageSize: 2, q, includeDeleted: false });
    expect(await page(1)).toMatchObject({ totalCount: 3, totalCountExact: true, items: [{ id: made[0]!.id }, { id: made[1]!.id }] });
    expect((await page(2)).items.map((u) => u.id)).toEqual([made[2]!.id]);
    expect((await page(3)).items).toEqual([]);
    expect((await page(1, `BRAVO-${tag.toUpperCase()}`)).items.map((u) => u.id)).toEqual([made[1]!.id]);
    expect((await page(1, `%${tag}`)).items).toEqual([]);
  });
});

/**
 * AccessService's use case against the real PostgreSQL: whether a user holds a permission now,
 * through a live role of a live link, or as an Administrator; nobody else, whatever the id.
 */
import { randomUUID } from 'node:crypto';
import { directoryFixture, refusal, unique } from '../testing/app-fixture';

describe('access use case', () => {
  const fx = directoryFixture('directory_app_access');

  it('holds what its live roles grant now; an Administrator holds everything; nobody else anything', async () => {
    const permission = `catalog.edit.${unique()}`;
    const holder = await fx.actorHolding(permission);
    expect(await fx.uc.access.holds(holder.userId, permission)).toBe(true);
    expect(await fx.uc.access.holds(holder.userId.toUpperCase(), permission)).toBe(true);
    expect(await fx.uc.access.holds(holder.userId, 'users.manage')).toBe(false);
    expect(await fx.uc.access.holds(fx.admin.userId, `anything.${unique()}`)).toBe(true);
    expect(await fx.uc.access.holds(randomUUID(), permission)).toBe(false);
    expect(await fx.uc.access.holds('not-a-uuid', permission)).toBe(false);
    // Revoked now: the rights stored now count, not those of an older token.
    const [link] = (await fx.uc.links.list({ page: 1, pageSize: 10, q: permission, includeDeleted: false })).items;
    await fx.uc.links.remove(fx.admin, link!.id);
    expect(await fx.uc.access.holds(holder.userId, permission)).toBe(false);
    expect(await refusal(fx.uc.access.holds(holder.userId, ''))).toEqual({ code: 'VALIDATION', fields: ['permission'] });
  });
});

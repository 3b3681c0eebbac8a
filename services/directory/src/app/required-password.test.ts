/**
 * A password the account must change at sign-in (issue #39: imported with passwordChangeRequired),
 * against the real PostgreSQL: verify says so; the change takes the policy, refuses the current
 * password, clears the mark with one user.updated (password, passwordChangedAtSignIn), and cannot
 * be made twice; any other new password (the account page, a reset, an administrator) clears it too.
 */
import { SUBJECTS } from '@iam/contracts';
import { directoryFixture, PASSWORD, refusal, unique } from '../testing/app-fixture';

describe('a password the account must change at sign-in', () => {
  const fx = directoryFixture('directory_app_required_password');
  const marked = async () => {
    const user = await fx.uc.users.create(fx.admin, { firstName: 'Ada', lastName: 'Imported', email: `imported-${unique()}@example.com`, password: PASSWORD, roles: [] });
    await fx.ds.query('UPDATE users SET password_change_required = true WHERE id = $1', [user.id]);
    await fx.newEvents();
    return user;
  };
  const mark = async (id: string) => (await fx.ds.query<Array<{ m: boolean }>>('SELECT password_change_required AS m FROM users WHERE id = $1', [id]))[0]!.m;

  it('verify says so with the principal (never on a failure); the change clears it in one transaction with its event', async () => {
    const user = await marked();
    expect(await fx.uc.credentials.verify(user.email, PASSWORD)).toMatchObject({ principal: { userId: user.id }, passwordChangeRequired: true });
    expect(await fx.uc.credentials.verify(user.email, 'Wrong-Horse-99')).toEqual({ principal: null, accountExists: true, accountId: user.id });

    // The policy, and not the current password: nothing changes.
    expect(await refusal(fx.uc.credentials.changeRequiredPassword(user.id, 'short'))).toEqual({ code: 'VALIDATION', fields: ['newPassword'] });
    expect(await refusal(fx.uc.credentials.changeRequiredPassword(user.id, PASSWORD))).toEqual({ code: 'VALIDATION', fields: ['newPassword'] });
    expect(await mark(user.id)).toBe(true);
    expect(await fx.newEvents()).toEqual([]);

    await fx.uc.credentials.changeRequiredPassword(user.id, 'Chosen-Horse-77');
    expect(await mark(user.id)).toBe(false);
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.userUpdated, payload: expect.objectContaining({ userId: user.id, changedFields: ['password'], passwordChangedAtSignIn: true }) },
    ]);
    expect((await fx.uc.credentials.verify(user.email, 'Chosen-Horse-77')).passwordChangeRequired).toBeUndefined();
    expect((await fx.uc.credentials.verify(user.email, PASSWORD)).principal).toBeNull();
    // Once: the mark is gone, so a second change (a replayed step) is a conflict and changes nothing.
    expect(await refusal(fx.uc.credentials.changeRequiredPassword(user.id, 'Another-Horse-88'))).toEqual({ code: 'CONFLICT', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
  });

  it('an account with no mark, or none at all: refused, nothing written', async () => {
    const user = await fx.uc.users.create(fx.admin, { firstName: 'Ada', lastName: 'Native', email: `native-${unique()}@example.com`, password: PASSWORD, roles: [] });
    await fx.newEvents();
    expect(await refusal(fx.uc.credentials.changeRequiredPassword(user.id, 'Chosen-Horse-77'))).toEqual({ code: 'CONFLICT', fields: [] });
    expect(await refusal(fx.uc.credentials.changeRequiredPassword('00000000-0000-4000-8000-000000000000', 'Chosen-Horse-77'))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
  });

  it('a password set another way (an administrator, a reset) clears the mark too', async () => {
    const user = await marked();
    await fx.uc.users.update(fx.admin, user.id, { password: 'Admin-Set-Horse-55' });
    expect(await mark(user.id)).toBe(false);
  });
});

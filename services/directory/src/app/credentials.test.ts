/**
 * The credential use cases against the real PostgreSQL, through the composition root: one answer
 * for every failed check, a rehash at login when the parameters changed, the password reset as one
 * transaction recorded once (a retry answers as the first call, another attempt is refused, a weak
 * password or another address changes nothing), the email-verified flag, and ensureAdministrator
 * (safe to run twice: no write, no event), with the events they write to the outbox.
 */
import { SUBJECTS } from '@iam/contracts';
import { sha256 } from '@iam/platform';
import { randomUUID } from 'node:crypto';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import { Argon2Hasher, BoundedQueue } from '../infra/argon2-hasher';
import { directoryFixture, PASSWORD, refusal, unique } from '../testing/app-fixture';

describe('credential use cases', () => {
  const fx = directoryFixture('directory_app_credentials');
  const hashOf = async (userId: string) => (await fx.ds.query<Array<{ password_hash: string }>>('SELECT password_hash FROM users WHERE id = $1', [userId]))[0]!.password_hash;
  const newUser = async (roles: string[] = []) => {
    const user = await fx.uc.users.create(fx.admin, { firstName: 'Grace', lastName: 'Hopper', email: `grace-${unique()}@example.com`, password: PASSWORD, roles });
    await fx.newEvents();
    return user;
  };

  it('verify: the principal for the right password (email in any case); one answer for everything else', async () => {
    const role = await fx.uc.roles.create({ name: `pilots-${unique()}` });
    const link = await fx.uc.links.create(fx.admin, { roleId: role.id, permissionId: await fx.permissionId(`flights.plan.${unique()}`) });
    const user = await newUser([role.name]);
    const ok = await fx.uc.credentials.verify(`  ${user.email.toUpperCase()} `, PASSWORD);
    expect(ok).toEqual({
      principal: { userId: user.id, firstName: 'Grace', lastName: 'Hopper', email: user.email, roles: [role.name], permissions: [link.permissionName], emailVerified: false },
      accountExists: true,
      accountId: user.id,
    });
    const failed = { principal: null, accountExists: true, accountId: user.id };
    expect(await fx.uc.credentials.verify(user.email, 'Wrong-Horse-99')).toEqual(failed);
    // A locked account: not evaluated at all, even with the right password.
    expect(await fx.uc.credentials.verify(user.email, PASSWORD, { skipEvaluation: true })).toEqual(failed);
    expect(await fx.uc.credentials.verify(user.email, 'x'.repeat(129))).toEqual(failed);
    expect(await fx.uc.credentials.verify(`nobody-${unique()}@example.com`, PASSWORD)).toEqual({ principal: null, accountExists: false, accountId: undefined });
    await fx.uc.users.remove(fx.admin, user.id);
    expect(await fx.uc.credentials.verify(user.email, PASSWORD)).toEqual({ principal: null, accountExists: false, accountId: undefined });
    expect(await refusal(fx.uc.credentials.principal(user.id))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await fx.uc.credentials.findAccount(user.email)).toBeNull();
  });

  it('a hash made with other parameters is replaced at the next login, with no event', async () => {
    const user = await newUser();
    const old = await new Argon2Hasher({ memoryKiB: 8_192, iterations: 2, parallelism: 1 }, new BoundedQueue(1, 1)).hash(PASSWORD);
    await fx.ds.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, old]);
    expect((await fx.uc.credentials.verify(user.email, PASSWORD)).principal).toMatchObject({ userId: user.id });
    expect(await hashOf(user.id)).toMatch(/^\$argon2id\$v=19\$m=8192,t=1,p=1\$/);
    expect((await fx.uc.credentials.verify(user.email, PASSWORD)).principal).toMatchObject({ userId: user.id });
    expect(await fx.newEvents()).toEqual([]);
  });

  it('resetPassword: hash, record and event in one transaction; a retry answers as the first call; another attempt is NOT_FOUND', async () => {
    const user = await newUser();
    const reset = { userId: user.id, password: 'Reset-Horse-42', emailSha256: sha256(user.email), resetId: randomUUID(), attemptId: randomUUID() };
    const first = await fx.uc.credentials.resetPassword(reset);
    expect(first).toEqual({ changedAt: expect.any(Date), email: user.email, firstName: 'Grace' });
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.userUpdated, payload: expect.objectContaining({ userId: user.id, changedFields: ['password'], passwordResetId: reset.resetId }) },
    ]);
    expect((await fx.uc.credentials.verify(user.email, 'Reset-Horse-42')).principal).toMatchObject({ userId: user.id });
    await expect(fx.uc.credentials.resetPassword(reset)).resolves.toEqual(first);
    expect(await refusal(fx.uc.credentials.resetPassword({ ...reset, attemptId: randomUUID(), password: 'Other-Horse-43' }))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await fx.newEvents()).toEqual([]);
    expect((await fx.uc.credentials.verify(user.email, 'Reset-Horse-42')).principal).toMatchObject({ userId: user.id });
  });

  it('resetPassword changes nothing for a weak password, another address or a deleted user', async () => {
    const user = await newUser();
    const hash = await hashOf(user.id);
    const reset = { userId: user.id, password: 'Reset-Horse-42', emailSha256: sha256(user.email), resetId: randomUUID(), attemptId: randomUUID() };
    expect(await refusal(fx.uc.credentials.resetPassword({ ...reset, password: 'weak' }))).toEqual({ code: 'VALIDATION', fields: ['newPassword'] });
    expect(await refusal(fx.uc.credentials.resetPassword({ ...reset, emailSha256: sha256('old@example.com') }))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect(await hashOf(user.id)).toBe(hash);
    expect(await fx.newEvents()).toEqual([]);
    // Neither refusal used the reset: it still works.
    await fx.uc.credentials.resetPassword(reset);
    await fx.uc.users.remove(fx.admin, user.id);
    expect(await refusal(fx.uc.credentials.resetPassword({ ...reset, resetId: randomUUID() }))).toEqual({ code: 'NOT_FOUND', fields: [] });
  });

  it('markEmailVerified sets the flag with its event, only while the account has the address', async () => {
    const user = await newUser();
    expect(await refusal(fx.uc.credentials.markEmailVerified(user.id, sha256('elsewhere@example.com')))).toEqual({ code: 'NOT_FOUND', fields: [] });
    expect((await fx.uc.users.get(user.id)).emailVerified).toBe(false);
    expect(await fx.newEvents()).toEqual([]);
    await fx.uc.credentials.markEmailVerified(user.id, sha256(user.email));
    expect((await fx.uc.users.get(user.id)).emailVerified).toBe(true);
    expect(await fx.newEvents()).toEqual([
      { subject: SUBJECTS.userUpdated, payload: expect.objectContaining({ changedFields: ['emailVerified'], emailVerified: true, before: expect.objectContaining({ emailVerified: false }) }) },
    ]);
  });

  it('ensureAdministrator creates the account once; run again it changes nothing; a new password or a plain user is brought in line', async () => {
    const email = `root-${unique()}@example.com`;
    const made = await fx.uc.credentials.ensureAdministrator({ email, password: PASSWORD, firstName: 'Root' });
    expect(made).toMatchObject({ created: true, user: { email, firstName: 'Root', lastName: 'User', roles: [ADMINISTRATOR_ROLE] } });
    expect((await fx.newEvents()).map((e) => e.subject)).toEqual([SUBJECTS.userCreated]);
    const hash = await hashOf(made.user.id);
    await expect(fx.uc.credentials.ensureAdministrator({ email, password: PASSWORD })).resolves.toMatchObject({ created: false, user: { id: made.user.id, firstName: 'Root' } });
    expect(await hashOf(made.user.id)).toBe(hash);
    expect(await fx.newEvents()).toEqual([]);
    await fx.uc.credentials.ensureAdministrator({ email, password: 'Newer-Horse-77' });
    expect((await fx.newEvents()).map((e) => e.payload.changedFields)).toEqual([['password']]);
    expect((await fx.uc.credentials.verify(email, 'Newer-Horse-77')).principal).toMatchObject({ roles: [ADMINISTRATOR_ROLE] });
    // An existing plain user becomes an Administrator, keeping its other roles.
    const role = await fx.uc.roles.create({ name: `ops-${unique()}` });
    const plain = await newUser([role.name]);
    await expect(fx.uc.credentials.ensureAdministrator({ email: plain.email, password: PASSWORD })).resolves.toMatchObject({ created: false, user: { id: plain.id, roles: [ADMINISTRATOR_ROLE, role.name].sort() } });
    expect((await fx.newEvents()).map((e) => e.payload.changedFields)).toEqual([['roles']]);
    expect(await refusal(fx.uc.credentials.ensureAdministrator({ email: 'not an email', password: 'weak' }))).toEqual({ code: 'VALIDATION', fields: ['email', 'password'] });
  });
});

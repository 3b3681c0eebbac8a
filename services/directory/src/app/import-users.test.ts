/**
 * Bulk import against the real PostgreSQL: created, skipped and refused lines, a rerun that
 * changes nothing, roles under DESIGN §3's rules, one user.created per user carrying the job id and
 * one users.imported per job, and the bad input of issue #39 (truncated hashes, absurd costs,
 * control characters, duplicate lines), each refused on its own line with nothing half-written.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { ADMINISTRATOR_ROLE } from '../domain/model';
import { directoryFixture, refusal, unique } from '../testing/app-fixture';
import type { ImportRecord } from './import-users';

const BCRYPT_TEST = '$2a$12$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6';

describe('bulk import', () => {
  const fx = directoryFixture('directory_app_import');
  const lines = (...users: unknown[]): ImportRecord[] => users.map((u, i) => ({ line: i + 1, text: typeof u === 'string' ? u : JSON.stringify(u) }));
  const userCount = async () => Number((await fx.ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM users'))[0]!.n);

  it('creates, skips and refuses line by line; a rerun changes nothing', async () => {
    const tag = unique();
    const role = await fx.uc.roles.create({ name: `imported-${tag}` });
    await fx.newEvents();
    const good = { firstName: 'Ada', lastName: 'Lovelace', email: `ada-${tag}@example.com`, passwordHash: BCRYPT_TEST, roles: [role.name], emailVerified: true, externalId: `kc-${tag}` };
    const id = randomUUID();
    const second = { firstName: 'Alan', lastName: 'Turing', email: `alan-${tag}@example.com`, id, passwordHash: { algorithm: 'sha256', hash: '0gfRVLCvtBCk20udLDEY5vNhujWx7RGjwRIS1ebMsLY=', salt: 'NW9wbWtnejAzcg==', params: { layout: 'salt-password' } } };
    const bad = { firstName: 'Bad', lastName: 'Hash', email: `bad-${tag}@example.com`, passwordHash: '$2a$31$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6' };
    const job = randomUUID();
    const results = await fx.uc.imports.importBatch(fx.admin, job, lines(good, second, bad, 'not json', good));
    expect(results).toEqual([
      { line: 1, status: 'created', userId: expect.any(String), hashFamily: 'bcrypt' },
      { line: 2, status: 'created', userId: id, hashFamily: 'salted-sha256' },
      { line: 3, status: 'refused', reason: 'passwordHash: bcrypt cost 31 is above the limit of 15' },
      { line: 4, status: 'refused', reason: 'not valid JSON' },
      { line: 5, status: 'skipped', reason: 'duplicate of line 1' },
    ]);
    const created = await fx.uc.users.get((results[0] as { userId: string }).userId);
    expect(created).toMatchObject({ email: good.email, roles: [role.name], emailVerified: true });
    const events = await fx.newEvents();
    expect(events).toHaveLength(2);
    expect(events).toEqual(
      expect.arrayContaining([
        { subject: SUBJECTS.userCreated, payload: expect.objectContaining({ email: good.email, roles: [role.name], importJobId: job }) },
        { subject: SUBJECTS.userCreated, payload: expect.objectContaining({ userId: id, importJobId: job }) },
      ]),
    );
    await fx.uc.imports.finish(job, { created: 2, skipped: 1, refused: 2 }, 'api');
    expect(await fx.newEvents()).toEqual([{ subject: SUBJECTS.usersImported, payload: expect.objectContaining({ jobId: job, created: 2, skipped: 1, refused: 2, source: 'api' }) }]);

    const before = await userCount();
    const again = await fx.uc.imports.importBatch(fx.admin, randomUUID(), lines(good, { ...second, email: `other-${tag}@example.com` }, { ...good, email: `new-${tag}@example.com` }));
    expect(again).toEqual([
      { line: 1, status: 'skipped', reason: 'a user with this email exists' },
      { line: 2, status: 'refused', reason: 'id: another user (or a deleted one) has this id' },
      { line: 3, status: 'skipped', reason: 'a user with this externalId exists' },
    ]);
    expect(await userCount()).toBe(before);
    expect(await fx.newEvents()).toEqual([]);
  });

  it('refuses bad input on its own line: truncated hashes, absurd costs, control characters, unknown formats and fields', async () => {
    const tag = unique();
    const base = (n: number) => ({ firstName: 'Bad', lastName: 'Input', email: `bad-${n}-${tag}@example.com` });
    const before = await userCount();
    const results = await fx.uc.imports.importBatch(
      fx.admin,
      randomUUID(),
      lines(
        { ...base(1), passwordHash: BCRYPT_TEST.slice(0, 40) },
        { ...base(2), passwordHash: '$pbkdf2-sha256$i=1000000000,l=32$1jP+5Zxpxgtee/iPxGgOz0RfE9/KJuDElP1ley4VxXc$QJxzfvdbHYBpydCbHoFg3GJEqMFULwskiuqiJctoYpI' },
        { ...base(3), firstName: 'Nul\u0000Name', passwordHash: BCRYPT_TEST },
        { ...base(4), passwordHash: `${BCRYPT_TEST}\u0000` },
        { ...base(5), passwordHash: 'md4:abcdef' },
        { ...base(6), password: 'plain-text-is-not-imported' },
        { ...base(7), passwordHash: BCRYPT_TEST, passwordMigration: 'hook' },
        { ...base(8), roles: ['no-such-role'] },
        { ...base(9), passwordHash: { algorithm: 'rot13', hash: 'abc' } },
        '[1, 2]',
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('refused'));
    expect(results.map((r) => ('reason' in r ? r.reason : ''))).toEqual([
      'passwordHash: malformed or truncated bcrypt hash',
      'passwordHash: PBKDF2 iterations 1000000000 is above the limit of 5000000',
      'firstName: must not contain control characters',
      'passwordHash: must not contain control characters',
      'passwordHash: unknown hash format',
      'password: unknown field',
      'passwordMigration: excludes passwordHash (the hook gives the hash at the first sign-in)',
      'roles: unknown role(s) "no-such-role"',
      'passwordHash: unknown algorithm "rot13"',
      'must be a JSON object',
    ]);
    expect(await userCount()).toBe(before);
    expect(await fx.newEvents()).toEqual([]);
  });

  it('assigns roles under the Administrator rule: a non-Administrator never gives Administrator or a permission it lacks', async () => {
    const tag = unique();
    const manager = await fx.actorHolding('users.manage');
    const strong = await fx.uc.roles.create({ name: `strong-${tag}` });
    await fx.uc.links.create(fx.admin, { roleId: strong.id, permissionId: await fx.permissionId('roles.manage') });
    const u = (n: number, roles: string[]) => ({ firstName: 'Role', lastName: 'Test', email: `role-${n}-${tag}@example.com`, roles });
    const results = await fx.uc.imports.importBatch(manager, randomUUID(), lines(u(1, [ADMINISTRATOR_ROLE]), u(2, [strong.name]), u(3, [])));
    expect(results.map((r) => r.status)).toEqual(['refused', 'refused', 'created']);
    expect((results[0] as { reason: string }).reason).toMatch(/^roles: Only an Administrator/);
    expect((results[1] as { reason: string }).reason).toMatch(/missing: roles.manage/);
    const admin = await fx.uc.imports.importBatch(fx.admin, randomUUID(), lines(u(4, [ADMINISTRATOR_ROLE])));
    expect(admin[0]!.status).toBe('created');
  });

  it('refuses a batch that is not one: a job id that is not a UUID, too many lines', async () => {
    expect(await refusal(fx.uc.imports.importBatch(fx.admin, 'job-1', []))).toEqual({ code: 'VALIDATION', fields: ['jobId'] });
    const many = Array.from({ length: 1001 }, (_, i) => ({ line: i + 1, text: '{}' }));
    expect(await refusal(fx.uc.imports.importBatch(fx.admin, randomUUID(), many))).toEqual({ code: 'VALIDATION', fields: ['records'] });
  });
});

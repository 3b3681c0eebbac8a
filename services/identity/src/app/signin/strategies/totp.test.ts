/** The TOTP strategy against the real PostgreSQL: a code of the active app, each step once; the enrolment's pending secret, activated by its first code and mailed. */
import { randomBytes, randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import type { Principal } from '../../../domain/model';
import { SealingKeys, totpAad } from '../../../domain/sealing';
import { hotp, totpStep } from '../../../domain/totp';
import { entities, migrations } from '../../../infra/schema';
import { pgIdentityStores } from '../../../infra/stores';
import { createTotpSecrets } from '../../totp-secrets';
import { totpEnrolmentOf, totpStrategy } from './totp';

describe('TOTP strategy', () => {
  let db: MigratedDatabase;
  const totpKeys = new SealingKeys(randomBytes(32));
  const users = new Map<string, Principal>();
  const directory = { principal: async (id: string) => users.get(id) ?? null };
  beforeAll(async () => {
    db = await migratedTestDatabase('signin_totp', { entities, migrations });
  });
  afterAll(async () => {
    await db?.close();
  });
  const strategy = () => {
    const stores = pgIdentityStores(db.ds.manager);
    return { stores, s: totpStrategy({ totp: createTotpSecrets({ totpKeys, issuer: 'IAM', stores, directory }), stores, directory }) };
  };
  const user = () => {
    const p = { userId: randomUUID(), firstName: 'T', lastName: 'O', email: `totp-${randomUUID()}@example.com`, roles: [], permissions: [], emailVerified: true };
    users.set(p.userId, p);
    return p;
  };
  const secretOf = async (userId: string) => {
    const [row] = await db.ds.query<Array<{ sealed_secret: Buffer }>>('SELECT sealed_secret FROM mfa_totp WHERE user_id = $1', [userId]);
    return totpKeys.open(row!.sealed_secret, totpAad(userId));
  };

  it('enrolment: its options are the pending secret (the same when asked again); a wrong code activates nothing; the right one activates it, with the mail event', async () => {
    const { s, stores } = strategy();
    const u = user();
    const ctx = { userId: u.userId, challengeId: randomUUID() };
    const options = totpEnrolmentOf(await s.enrol!.options!(ctx));
    expect(options.otpauthUri).toContain('otpauth://totp/');
    expect(totpEnrolmentOf(await s.enrol!.options!(ctx))).toEqual(options);
    const secret = await secretOf(u.userId);
    const now = totpStep(Date.now());
    await expect(s.enrol!.verify(ctx, { method: 'totp', code: hotp(secret, now + 5) })).resolves.toBeNull();
    expect((await stores.totp.get(u.userId))?.active).toBe(false);
    const done = await s.enrol!.verify(ctx, { method: 'totp', code: hotp(secret, now) });
    expect(done).toMatchObject({ amr: ['otp'], events: [expect.objectContaining({ subject: SUBJECTS.factorAdded })] });
    expect((await stores.totp.get(u.userId))?.active).toBe(true);
    // Active now: no second enrolment, and as a second factor the same step is not accepted twice.
    await expect(s.enrol!.verify(ctx, { method: 'totp', code: hotp(secret, now + 1) })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'totp', code: hotp(secret, now) })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'totp', code: hotp(secret, now + 1) })).resolves.toEqual({ amr: ['otp'] });
    await expect(s.second!.verify(ctx, { method: 'totp', code: hotp(secret, now + 1) })).resolves.toBeNull();
  });

  it('a pending secret answers no second factor; offered only with an active app; an input of another shape is wrong', async () => {
    const { s } = strategy();
    const u = user();
    const ctx = { userId: u.userId, challengeId: randomUUID() };
    await s.enrol!.options!(ctx);
    const secret = await secretOf(u.userId);
    await expect(s.second!.verify(ctx, { method: 'totp', code: hotp(secret, totpStep(Date.now())) })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'totp', code: 123456 })).resolves.toBeNull();
    expect(s.second!.offered({ totp: true, passkeys: 0, recoveryCodesLeft: 0 })).toBe(true);
    expect(s.second!.offered({ totp: false, passkeys: 2, recoveryCodesLeft: 10 })).toBe(false);
    expect(s.enrol!.listed).toBe(true);
    expect(s.first).toBeUndefined();
  });
});

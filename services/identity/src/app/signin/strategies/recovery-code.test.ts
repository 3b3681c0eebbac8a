/** The recovery-code strategy against the real PostgreSQL: a code of the account verifies once (amr otp), in any case or spacing. */
import { randomBytes, randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { entities, migrations } from '../../../infra/schema';
import { pgIdentityStores } from '../../../infra/stores';
import { newRecoveryCode, recoveryDigest } from '../../recovery-codes';
import { recoveryCodeStrategy } from './recovery-code';

describe('recovery-code strategy', () => {
  let db: MigratedDatabase;
  const key = randomBytes(32);
  beforeAll(async () => {
    db = await migratedTestDatabase('signin_recovery', { entities, migrations });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('a code verifies once; another account\'s or a made-up one does not; offered while codes are left; not an enrolment', async () => {
    const stores = pgIdentityStores(db.ds.manager);
    const s = recoveryCodeStrategy({ recoveryKey: key, stores });
    const userId = randomUUID();
    const code = newRecoveryCode();
    await stores.recoveryCodes.replace(userId, [recoveryDigest(key, userId, code)]);
    const ctx = { userId, challengeId: randomUUID() };
    expect(s.verifiedSubject).toBe(SUBJECTS.recoveryCodeUsed);
    await expect(s.second!.verify({ userId: randomUUID(), challengeId: ctx.challengeId }, { method: 'recovery_code', code })).resolves.toBeNull();
    await expect(s.second!.verify(ctx, { method: 'recovery_code', code: newRecoveryCode() })).resolves.toBeNull();
    const spaced = ` ${code.toLowerCase().match(/.{1,4}/g)!.join(' ')} `;
    await expect(s.second!.verify(ctx, { method: 'recovery_code', code: spaced })).resolves.toEqual({ amr: ['otp'] });
    await expect(s.second!.verify(ctx, { method: 'recovery_code', code })).resolves.toBeNull();
    expect(s.second!.offered({ totp: true, passkeys: 0, recoveryCodesLeft: 1 })).toBe(true);
    expect(s.second!.offered({ totp: true, passkeys: 0, recoveryCodesLeft: 0 })).toBe(false);
    expect(s.first).toBeUndefined();
    expect(s.enrol).toBeUndefined();
  });
});

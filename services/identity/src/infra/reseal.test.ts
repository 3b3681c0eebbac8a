/**
 * Rotating the key-encryption key (issue #44 item 6) on the real PostgreSQL: with the new key
 * current and the old one in JWT_KEY_ENCRYPTION_KEY_PREVIOUS, the key ring still signs with the
 * key the old one sealed and TOTP secrets still open; `reseal` seals both again under the new
 * key, after which the new key alone opens everything; run again it changes nothing; what no
 * configured key opens is reported and left untouched.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { seal } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase, testLogger } from '@iam/platform/testing';
import { totpSealingKeys } from '../config';
import { SealingKeys, totpAad } from '../domain/sealing';
import { KeyRing } from './key-ring';
import { reseal } from './reseal';
import { sealedSecret } from './sealed-secrets';
import { DEFAULT_CLAIM_MAPPING, providerSecretAad } from '../domain/identity-providers';
import { entities, migrations } from './schema';
import { pgIdentityStores } from './stores';

describe('key-encryption key rotation: previous keys and reseal', () => {
  let db: MigratedDatabase;
  const logger = testLogger();
  const oldKek = randomBytes(32);
  const newKek = randomBytes(32);
  const rings: KeyRing[] = [];
  const ring = async (keyEncryptionKey: Buffer, previousKeyEncryptionKeys: Buffer[] = []) => {
    const r = new KeyRing({ dataSource: db.ds, alg: 'EdDSA', algs: ['EdDSA'], keyEncryptionKey, previousKeyEncryptionKeys, rotationHours: 720, tokenLifetimeSeconds: 300, logger });
    rings.push(r);
    await r.start();
    return r;
  };
  const keyCount = async () => Number((await db.ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM signing_keys'))[0]!.n);
  const totpOf = async (userId: string) => (await db.ds.query<Array<{ sealed_secret: Buffer }>>('SELECT sealed_secret FROM mfa_totp WHERE user_id = $1', [userId]))[0]!.sealed_secret;

  beforeAll(async () => {
    db = await migratedTestDatabase('identity_reseal', { entities, migrations });
  });

  afterAll(async () => {
    for (const r of rings) r.stop();
    await db?.close();
  });

  it('the previous key still opens during the rotation; reseal moves everything under the new key; again it changes nothing', async () => {
    // Before: everything sealed under the old key.
    await ring(oldKek);
    expect(await keyCount()).toBe(1);
    const user = randomUUID();
    const secret = randomBytes(20);
    await pgIdentityStores(db.ds.manager).totp.putPending(user, totpSealingKeys({ keyEncryptionKey: oldKek, previousKeyEncryptionKeys: [] }).seal(secret, totpAad(user)));
    // The recovery codes' key: random, made once under the old key.
    const recoveryKey = await sealedSecret(db.ds, 'recovery-code-key', new SealingKeys(oldKek));
    // An upstream identity provider's client secret (issue #40).
    const providerId = randomUUID();
    await pgIdentityStores(db.ds.manager).identityProviders.insert({
      id: providerId, kind: 'oidc', name: `reseal-${providerId.slice(0, 8)}`, displayName: 'Reseal', discoveryUrl: 'https://op.example/.well-known/openid-configuration', clientId: 'c',
      scopes: [], claimMapping: DEFAULT_CLAIM_MAPPING, trustEmailVerified: false, trustUpstreamMfa: false, allowSignUp: false, linking: 'never', defaultRoles: [], iconUrl: '', enabled: true,
      sealedSecret: new SealingKeys(oldKek).seal('upstream-secret', providerSecretAad(providerId)),
    });

    // The rotation window: the new key current, the old one previous. The old key's signing key
    // still signs (no new key is made for want of one), and the TOTP secret opens.
    const during = await ring(newKek, [oldKek]);
    expect(during.signingKeyAges()).toHaveLength(1);
    expect(await keyCount()).toBe(1);
    const both = totpSealingKeys({ keyEncryptionKey: newKek, previousKeyEncryptionKeys: [oldKek] });
    expect(both.openAny(await totpOf(user), totpAad(user))).toEqual({ plaintext: secret, stale: true });
    expect(await sealedSecret(db.ds, 'recovery-code-key', new SealingKeys(newKek, [oldKek]))).toEqual(recoveryKey);

    expect(await reseal(db.ds, { keyEncryptionKey: newKek, previousKeyEncryptionKeys: [oldKek] })).toEqual({
      signingKeys: { resealed: 1, current: 0, unreadable: 0 },
      totpSecrets: { resealed: 1, current: 0, unreadable: 0 },
      secrets: { resealed: 1, current: 0, unreadable: 0 },
      providerSecrets: { resealed: 1, current: 0, unreadable: 0 },
    });
    // The same recovery-code key under the new key alone: codes digested before still verify.
    expect(await sealedSecret(db.ds, 'recovery-code-key', new SealingKeys(newKek))).toEqual(recoveryKey);
    await expect(sealedSecret(db.ds, 'recovery-code-key', new SealingKeys(oldKek))).rejects.toThrow();

    // After: the new key alone opens everything; the old one nothing.
    const after = await ring(newKek);
    expect(after.signingKeyAges()).toHaveLength(1);
    expect(await keyCount()).toBe(1);
    expect(totpSealingKeys({ keyEncryptionKey: newKek, previousKeyEncryptionKeys: [] }).open(await totpOf(user), totpAad(user))).toEqual(secret);
    const sealedNow = await totpOf(user);
    expect(() => totpSealingKeys({ keyEncryptionKey: oldKek, previousKeyEncryptionKeys: [] }).open(sealedNow, totpAad(user))).toThrow();
    expect(await reseal(db.ds, { keyEncryptionKey: newKek, previousKeyEncryptionKeys: [] })).toEqual({
      signingKeys: { resealed: 0, current: 1, unreadable: 0 },
      totpSecrets: { resealed: 0, current: 1, unreadable: 0 },
      secrets: { resealed: 0, current: 1, unreadable: 0 },
      providerSecrets: { resealed: 0, current: 1, unreadable: 0 },
    });
    expect(new SealingKeys(newKek).open((await pgIdentityStores(db.ds.manager).identityProviders.sealedSecret(providerId))!, providerSecretAad(providerId)).toString()).toBe('upstream-secret');
  });

  it('what no configured key opens is counted unreadable and left as it is', async () => {
    const stranger = randomUUID();
    const foreign = seal(randomBytes(32), randomBytes(20), totpAad(stranger));
    await pgIdentityStores(db.ds.manager).totp.putPending(stranger, foreign);
    const report = await reseal(db.ds, { keyEncryptionKey: newKek, previousKeyEncryptionKeys: [oldKek] });
    expect(report.totpSecrets).toEqual({ resealed: 0, current: 1, unreadable: 1 });
    expect(await totpOf(stranger)).toEqual(foreign);
  });
});

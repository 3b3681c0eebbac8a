/**
 * jwt_signing_key_age_seconds against the real PostgreSQL: the age of the key that signs now, as
 * a replica loads it, and about 0 once its successor signs (so an alert can tell a rotation that
 * stopped from one that works).
 */
import { createDataSource, migrate } from '@iam/platform';
import { type TestDatabase, createTestDatabase, testLogger, testMetrics } from '@iam/platform/testing';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { SIGNING_KEY_AGE, registerSigningKeyAge } from './key-metrics';
import { KeyRing } from './key-ring';
import { entities, migrations } from './schema';

describe('identity: the signing key age metric', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const logger = testLogger();
  const kek = randomBytes(32);
  const keys = (rotationHours: number) =>
    new KeyRing({ dataSource: ds, alg: 'EdDSA', keyEncryptionKey: kek, rotationHours, tokenLifetimeSeconds: 300, logger });

  beforeAll(async () => {
    db = await createTestDatabase('identity_key_age');
    ds = createDataSource({ url: db.url, name: 'identity', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'identity', logger);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('jwt_signing_key_age_seconds: the age of the key that signs now, back to about 0 once its successor signs', async () => {
    const m = keys(2);
    const metrics = testMetrics();
    registerSigningKeyAge(metrics, m);
    const scrape = async () => (await metrics.registry.getSingleMetric(SIGNING_KEY_AGE)!.get()).values;
    expect(await scrape()).toEqual([]);
    await m.rotateIfDue();
    // One series per algorithm of the ring.
    const series = await scrape();
    expect(series.map((v) => v.labels.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    const first = series.find((v) => v.labels.alg === 'EdDSA');
    expect(first!.value).toBeGreaterThanOrEqual(0);
    expect(first!.value).toBeLessThan(60);
    // Backdated by a day (as another replica, a fresh manager loads it): the gauge says so.
    await ds.query("UPDATE signing_keys SET activates_at = activates_at - interval '1 day', retires_at = now() + interval '30 minutes' WHERE alg = 'EdDSA'");
    const replica = keys(2);
    registerSigningKeyAge(metrics, replica);
    await replica.rotateIfDue();
    const eddsa = (ages: Array<{ alg: string; seconds: number }>) => ages.find((a) => a.alg === 'EdDSA')!.seconds;
    expect(eddsa(replica.signingKeyAges())).toBeGreaterThan(86_000);
    expect((await scrape()).find((v) => v.labels.alg === 'EdDSA')!.value).toBeGreaterThan(86_000);
    // The other algorithms' keys are as young as before.
    expect((await scrape()).find((v) => v.labels.alg === 'RS256')!.value).toBeLessThan(60);
    // Its successor (made by that rotateIfDue) signs from the old one's retirement: about 0 then.
    const [oldest] = await ds.query<Array<{ retires_at: Date }>>("SELECT min(retires_at) AS retires_at FROM signing_keys WHERE alg = 'EdDSA'");
    expect(eddsa(replica.signingKeyAges(new Date(oldest!.retires_at.getTime() + 1_000)))).toBeLessThan(2);
  });

});

/**
 * The catalog against the real PostgreSQL: keyset pages and their tokens, search with literal
 * wildcards, batch reads, administration (sku uniqueness, archive, stock never below reserved)
 * and the demo seed.
 */
import { createDataSource, migrate } from '@iam/platform';
import { type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { REASONS, reasonOf } from '../domain/errors';
import { encodePageToken } from '../domain/rules';
import { entities, migrations } from '../infra/schema';
import { createCommerceUseCases } from '../service';
import { DEMO_CATALOG, seedDemoCatalog } from './seed-demo';

describe('catalog', () => {
  const logger = testLogger();
  let db: TestDatabase;
  let ds: DataSource;
  let uc: ReturnType<typeof createCommerceUseCases>;

  beforeAll(async () => {
    db = await createTestDatabase('commerce_catalog');
    ds = createDataSource({ url: db.url, name: 'commerce', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'commerce', logger);
    uc = createCommerceUseCases(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('seeds the demo catalog once, only into an empty catalog (also when two starts race)', async () => {
    const counts = await Promise.all([seedDemoCatalog(ds), seedDemoCatalog(ds)]);
    expect(counts.sort()).toEqual([0, DEMO_CATALOG.length]);
    expect(await seedDemoCatalog(ds)).toBe(0);
    const page = await uc.catalog.list({ pageSize: 100, pageToken: '', q: '' });
    expect(page.products.map((p) => p.sku)).toEqual(DEMO_CATALOG.map((p) => p.sku));
    expect(page.products.every((p) => p.status === 'ACTIVE' && p.available > 0 && p.currency === 'EUR')).toBe(true);
    expect(page.nextPageToken).toBeNull();
  });

  it('pages with opaque tokens: every product once, in (created_at, id) order, whatever the page size', async () => {
    const all = (await uc.catalog.list({ pageSize: 100, pageToken: '', q: '' })).products.map((p) => p.id);
    for (const size of [1, 5, 11]) {
      const seen: string[] = [];
      let token = '';
      do {
        const page = await uc.catalog.list({ pageSize: size, pageToken: token, q: '' });
        expect(page.products.length).toBeLessThanOrEqual(size);
        seen.push(...page.products.map((p) => p.id));
        token = page.nextPageToken ?? '';
      } while (token);
      expect(seen).toEqual(all);
    }
  });

  it('a bad page size or token is VALIDATION, never a database error', async () => {
    for (const pageSize of [0, 101, 1.5]) await expect(uc.catalog.list({ pageSize, pageToken: '', q: '' })).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'pageSize' }] });
    const forged = [
      'abc',
      'not base64!',
      Buffer.from('{"t":"x","i":"y"}').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from(`{"t":"1","i":"${randomUUID()}'; DROP TABLE products; --"}`).toString('base64url'),
      Buffer.from(`{"t":"99999999999999999999","i":"${randomUUID()}"}`).toString('base64url'),
      'x'.repeat(500),
    ];
    for (const pageToken of forged) {
      await expect(uc.catalog.list({ pageSize: 5, pageToken, q: '' })).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'pageToken' }] });
    }
    // A well-formed token past the end is an empty last page.
    const end = encodePageToken({ createdUs: String(Date.now() * 1000 + 10 ** 12), id: randomUUID() });
    await expect(uc.catalog.list({ pageSize: 5, pageToken: end, q: '' })).resolves.toEqual({ products: [], nextPageToken: null });
  });

  it('q is a case-insensitive substring of sku, name or description; LIKE wildcards match literally', async () => {
    const tag = randomUUID().slice(0, 8);
    const pct = await uc.catalog.create({ sku: `Q-${tag}-1`, name: `100% Wool ${tag}`, priceMinor: 1, currency: 'EUR' });
    const under = await uc.catalog.create({ sku: `Q-${tag}-2`, name: `snake_case ${tag}`, priceMinor: 1, currency: 'EUR' });
    await uc.catalog.create({ sku: `Q-${tag}-3`, name: `100 Wool snakeXcase ${tag}`, priceMinor: 1, currency: 'EUR', description: 'back\\slash' });
    const ids = async (q: string) => (await uc.catalog.list({ pageSize: 100, pageToken: '', q })).products.map((p) => p.id);
    expect(await ids(`0% WOOL ${tag}`)).toEqual([pct.id]);
    expect(await ids('e_c')).toEqual([under.id]);
    expect(await ids(`q-${tag}`)).toHaveLength(3);
    expect(await ids('%')).toEqual([pct.id]);
    expect(await ids('k\\s')).toHaveLength(1);
    await expect(uc.catalog.list({ pageSize: 5, pageToken: '', q: 'x'.repeat(201) })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('status filter, archive (idempotent) and re-activation', async () => {
    const p = await uc.catalog.create({ sku: `A-${randomUUID().slice(0, 8)}`, name: 'Old thing', priceMinor: 500, currency: 'EUR', onHand: 3 });
    const archived = await uc.catalog.archive(p.id);
    expect(archived.status).toBe('ARCHIVED');
    expect((await uc.catalog.archive(p.id)).updatedAt).toEqual(archived.updatedAt);
    const list = async (status: 'ACTIVE' | 'ARCHIVED') => (await uc.catalog.list({ pageSize: 100, pageToken: '', q: '', status })).products.map((x) => x.id);
    expect(await list('ARCHIVED')).toContain(p.id);
    expect(await list('ACTIVE')).not.toContain(p.id);
    expect((await uc.catalog.update(p.id, { status: 'ACTIVE' })).status).toBe('ACTIVE');
    await expect(uc.catalog.archive(randomUUID())).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('create and update validate their input; a taken sku is CONFLICT (no reason); skus are upper-cased', async () => {
    const sku = `c-${randomUUID().slice(0, 8)}`;
    const p = await uc.catalog.create({ sku, name: '  Lamp ', description: 'Two\nlines', priceMinor: 0, currency: 'JPY' });
    expect(p).toMatchObject({ sku: sku.toUpperCase(), name: 'Lamp', description: 'Two\nlines', priceMinor: 0, currency: 'JPY', onHand: 0, reserved: 0, available: 0 });
    const dup = await uc.catalog.create({ sku: sku.toUpperCase(), name: 'x', priceMinor: 1, currency: 'EUR' }).catch((e: unknown) => e);
    expect(dup).toMatchObject({ code: 'CONFLICT', errors: [{ field: 'sku' }] });
    expect(reasonOf(dup)).toBeUndefined();
    await expect(uc.catalog.create({ sku: 'has space', name: '', priceMinor: -1, currency: 'eur', onHand: -2 })).rejects.toMatchObject({
      code: 'VALIDATION',
      errors: expect.arrayContaining([
        expect.objectContaining({ field: 'sku' }),
        expect.objectContaining({ field: 'name' }),
        expect.objectContaining({ field: 'priceMinor' }),
        expect.objectContaining({ field: 'currency' }),
        expect.objectContaining({ field: 'onHand' }),
      ]),
    });
    await expect(uc.catalog.create({ sku: 'OK-1', name: 'x\u0000', priceMinor: 2 ** 60, currency: 'EUR' })).rejects.toMatchObject({ code: 'VALIDATION' });
    const other = await uc.catalog.create({ sku: `d-${randomUUID().slice(0, 8)}`, name: 'Other', priceMinor: 1, currency: 'EUR' });
    await expect(uc.catalog.update(other.id, { sku })).rejects.toMatchObject({ code: 'CONFLICT' });
    const updated = await uc.catalog.update(other.id, { name: 'Renamed', priceMinor: 990, currency: 'USD' });
    expect(updated).toMatchObject({ name: 'Renamed', priceMinor: 990, currency: 'USD' });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(other.updatedAt.getTime());
    await expect(uc.catalog.update(randomUUID(), { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(uc.catalog.get('not-a-uuid')).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('adjust stock: by delta or to a count, never below what is reserved', async () => {
    const p = await uc.catalog.create({ sku: `S-${randomUUID().slice(0, 8)}`, name: 'Stocked', priceMinor: 100, currency: 'EUR', onHand: 10 });
    await uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: 'k', lines: [{ productId: p.id, quantity: 4 }] });
    expect(await uc.catalog.adjustStock(p.id, { delta: 5 })).toMatchObject({ onHand: 15, reserved: 4, available: 11 });
    expect(await uc.catalog.adjustStock(p.id, { setOnHand: 4 })).toMatchObject({ onHand: 4, available: 0 });
    for (const change of [{ setOnHand: 3 }, { delta: -1 }]) {
      const err = await uc.catalog.adjustStock(p.id, change).catch((e: unknown) => e);
      expect(reasonOf(err)).toBe(REASONS.insufficientStock);
    }
    for (const change of [{}, { delta: 1, setOnHand: 1 }, { delta: 0 }, { setOnHand: -1 }, { delta: 2e9 }]) {
      await expect(uc.catalog.adjustStock(p.id, change)).rejects.toMatchObject({ code: 'VALIDATION' });
    }
    await uc.catalog.adjustStock(p.id, { setOnHand: 1_000_000_000 });
    await expect(uc.catalog.adjustStock(p.id, { delta: 1 })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(uc.catalog.adjustStock(randomUUID(), { delta: 1 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await uc.catalog.get(p.id)).reserved).toBe(4);
  });

  it('batch get: one call for many ids; unknown ids left out; duplicates and case do not matter', async () => {
    const { products } = await uc.catalog.list({ pageSize: 3, pageToken: '', q: '' });
    const ids = products.map((p) => p.id);
    const found = await uc.catalog.batchGet([...ids, ids[0]!.toUpperCase(), randomUUID()]);
    expect(found.map((p) => p.id).sort()).toEqual([...ids].sort());
    expect(await uc.catalog.batchGet([])).toEqual([]);
    await expect(uc.catalog.batchGet(['x'])).rejects.toMatchObject({ code: 'VALIDATION', errors: [{ field: 'ids[0]' }] });
    await expect(uc.catalog.batchGet(Array.from({ length: 1_001 }, () => randomUUID()))).rejects.toMatchObject({ code: 'VALIDATION' });
  });
});

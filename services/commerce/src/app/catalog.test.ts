/**
 * The catalog against the real PostgreSQL: keyset pages and their tokens, search with literal
 * wildcards, batch reads, administration (sku uniqueness, archive, stock never below reserved),
 * its authorization on the caller's current rights, the commerce.product.* event of every write
 * (in the outbox, in the write's transaction) and the demo seed.
 */
import { SUBJECTS, decodeEvent } from '@iam/contracts';
import { createDataSource, migrate, withRequestContext } from '@iam/platform';
import { TestAccess, type TestDatabase, createTestDatabase, testLogger } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { REASONS, reasonOf } from '../domain/errors';
import { encodePageToken } from '../domain/rules';
import { entities, migrations } from '../infra/schema';
import { createCommerceUseCases } from '../service';
import { DEMO_CATALOG, seedDemoCatalog } from './seed-demo';

describe('catalog', () => {
  const logger = testLogger();
  /** A products.manage holder (as the directory answers now). */
  const MANAGER = randomUUID();
  const access = new TestAccess().grant(MANAGER, 'products.manage');
  let db: TestDatabase;
  let ds: DataSource;
  let uc: ReturnType<typeof createCommerceUseCases>;

  beforeAll(async () => {
    db = await createTestDatabase('commerce_catalog');
    ds = createDataSource({ url: db.url, name: 'commerce', entities, migrations, logger });
    await ds.initialize();
    await migrate(ds, 'commerce', logger);
    uc = createCommerceUseCases(ds, access);
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
    const pct = await uc.catalog.create(MANAGER, { sku: `Q-${tag}-1`, name: `100% Wool ${tag}`, priceMinor: 1, currency: 'EUR' });
    const under = await uc.catalog.create(MANAGER, { sku: `Q-${tag}-2`, name: `snake_case ${tag}`, priceMinor: 1, currency: 'EUR' });
    await uc.catalog.create(MANAGER, { sku: `Q-${tag}-3`, name: `100 Wool snakeXcase ${tag}`, priceMinor: 1, currency: 'EUR', description: 'back\\slash' });
    const ids = async (q: string) => (await uc.catalog.list({ pageSize: 100, pageToken: '', q })).products.map((p) => p.id);
    expect(await ids(`0% WOOL ${tag}`)).toEqual([pct.id]);
    expect(await ids('e_c')).toEqual([under.id]);
    expect(await ids(`q-${tag}`)).toHaveLength(3);
    expect(await ids('%')).toEqual([pct.id]);
    expect(await ids('k\\s')).toHaveLength(1);
    await expect(uc.catalog.list({ pageSize: 5, pageToken: '', q: 'x'.repeat(201) })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('status filter, archive (idempotent) and re-activation', async () => {
    const p = await uc.catalog.create(MANAGER, { sku: `A-${randomUUID().slice(0, 8)}`, name: 'Old thing', priceMinor: 500, currency: 'EUR', onHand: 3 });
    const archived = await uc.catalog.archive(MANAGER, p.id);
    expect(archived.status).toBe('ARCHIVED');
    expect((await uc.catalog.archive(MANAGER, p.id)).updatedAt).toEqual(archived.updatedAt);
    const list = async (status: 'ACTIVE' | 'ARCHIVED') => (await uc.catalog.list({ pageSize: 100, pageToken: '', q: '', status })).products.map((x) => x.id);
    expect(await list('ARCHIVED')).toContain(p.id);
    expect(await list('ACTIVE')).not.toContain(p.id);
    expect((await uc.catalog.update(MANAGER, p.id, { status: 'ACTIVE' })).status).toBe('ACTIVE');
    await expect(uc.catalog.archive(MANAGER, randomUUID())).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('create and update validate their input; a taken sku is CONFLICT (no reason); skus are upper-cased', async () => {
    const sku = `c-${randomUUID().slice(0, 8)}`;
    const p = await uc.catalog.create(MANAGER, { sku, name: '  Lamp ', description: 'Two\nlines', priceMinor: 0, currency: 'JPY' });
    expect(p).toMatchObject({ sku: sku.toUpperCase(), name: 'Lamp', description: 'Two\nlines', priceMinor: 0, currency: 'JPY', onHand: 0, reserved: 0, available: 0 });
    const dup = await uc.catalog.create(MANAGER, { sku: sku.toUpperCase(), name: 'x', priceMinor: 1, currency: 'EUR' }).catch((e: unknown) => e);
    expect(dup).toMatchObject({ code: 'CONFLICT', errors: [{ field: 'sku' }] });
    expect(reasonOf(dup)).toBeUndefined();
    await expect(uc.catalog.create(MANAGER, { sku: 'has space', name: '', priceMinor: -1, currency: 'eur', onHand: -2 })).rejects.toMatchObject({
      code: 'VALIDATION',
      errors: expect.arrayContaining([
        expect.objectContaining({ field: 'sku' }),
        expect.objectContaining({ field: 'name' }),
        expect.objectContaining({ field: 'priceMinor' }),
        expect.objectContaining({ field: 'currency' }),
        expect.objectContaining({ field: 'onHand' }),
      ]),
    });
    await expect(uc.catalog.create(MANAGER, { sku: 'OK-1', name: 'x\u0000', priceMinor: 2 ** 60, currency: 'EUR' })).rejects.toMatchObject({ code: 'VALIDATION' });
    const other = await uc.catalog.create(MANAGER, { sku: `d-${randomUUID().slice(0, 8)}`, name: 'Other', priceMinor: 1, currency: 'EUR' });
    await expect(uc.catalog.update(MANAGER, other.id, { sku })).rejects.toMatchObject({ code: 'CONFLICT' });
    const updated = await uc.catalog.update(MANAGER, other.id, { name: 'Renamed', priceMinor: 990, currency: 'USD' });
    expect(updated).toMatchObject({ name: 'Renamed', priceMinor: 990, currency: 'USD' });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(other.updatedAt.getTime());
    await expect(uc.catalog.update(MANAGER, randomUUID(), { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(uc.catalog.get('not-a-uuid')).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('adjust stock: by delta or to a count, never below what is reserved', async () => {
    const p = await uc.catalog.create(MANAGER, { sku: `S-${randomUUID().slice(0, 8)}`, name: 'Stocked', priceMinor: 100, currency: 'EUR', onHand: 10 });
    await uc.orders.checkout({ customerId: randomUUID(), idempotencyKey: 'k', lines: [{ productId: p.id, quantity: 4 }] });
    expect(await uc.catalog.adjustStock(MANAGER, p.id, { delta: 5 })).toMatchObject({ onHand: 15, reserved: 4, available: 11 });
    expect(await uc.catalog.adjustStock(MANAGER, p.id, { setOnHand: 4 })).toMatchObject({ onHand: 4, available: 0 });
    for (const change of [{ setOnHand: 3 }, { delta: -1 }]) {
      const err = await uc.catalog.adjustStock(MANAGER, p.id, change).catch((e: unknown) => e);
      expect(reasonOf(err)).toBe(REASONS.insufficientStock);
    }
    for (const change of [{}, { delta: 1, setOnHand: 1 }, { delta: 0 }, { setOnHand: -1 }, { delta: 2e9 }]) {
      await expect(uc.catalog.adjustStock(MANAGER, p.id, change)).rejects.toMatchObject({ code: 'VALIDATION' });
    }
    await uc.catalog.adjustStock(MANAGER, p.id, { setOnHand: 1_000_000_000 });
    await expect(uc.catalog.adjustStock(MANAGER, p.id, { delta: 1 })).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(uc.catalog.adjustStock(MANAGER, randomUUID(), { delta: 1 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await uc.catalog.get(p.id)).reserved).toBe(4);
  });

  /** The commerce.product.* events of `productId` in the outbox that no earlier call returned. */
  const seen = new Set<string>();
  const newEvents = async (productId: string) => {
    const rows = await ds.query<Array<{ id: string; subject: string; payload: Buffer; headers: Record<string, string> | null }>>(
      `SELECT id, subject, payload, headers FROM outbox_events WHERE subject LIKE 'commerce.product.%'`,
    );
    const fresh = rows.filter((r) => !seen.has(r.id));
    fresh.forEach((r) => seen.add(r.id));
    return fresh
      .map((r) => ({ subject: r.subject, headers: r.headers, ...decodeEvent(r.subject as typeof SUBJECTS.productUpdated, r.payload) }))
      .filter((e) => e.productId === productId)
      .map(({ subject, headers, before, after, changedFields }) => ({ subject, actor: headers?.['iam-actor-sub'], before, after, changedFields }));
  };

  it('every catalog write publishes its commerce.product.* event: the actor and the before/after of each changed field; no change, no event', async () => {
    const write = <T>(fn: () => Promise<T>) => withRequestContext({ actor: MANAGER, clientIp: '203.0.113.9' }, fn);
    const sku = `E-${randomUUID().slice(0, 8)}`.toUpperCase();
    const name = `Lamp ${sku}`;
    const p = await write(() => uc.catalog.create(MANAGER, { sku, name, priceMinor: 1_500, currency: 'EUR', onHand: 3 }));
    const state = { sku, name, description: '', priceMinor: 1_500, currency: 'EUR', status: 'ACTIVE', onHand: 3 };
    expect(await newEvents(p.id)).toEqual([{ subject: SUBJECTS.productCreated, actor: MANAGER, before: undefined, after: state, changedFields: [] }]);
    // A price set to 1 and back: two changes, each with both values.
    await write(() => uc.catalog.update(MANAGER, p.id, { priceMinor: 1 }));
    await write(() => uc.catalog.update(MANAGER, p.id, { priceMinor: 1_500, name }));
    expect(await newEvents(p.id)).toEqual([
      { subject: SUBJECTS.productUpdated, actor: MANAGER, before: state, after: { ...state, priceMinor: 1 }, changedFields: ['priceMinor'] },
      { subject: SUBJECTS.productUpdated, actor: MANAGER, before: { ...state, priceMinor: 1 }, after: state, changedFields: ['priceMinor'] },
    ]);
    await write(() => uc.catalog.archive(MANAGER, p.id));
    await write(() => uc.catalog.archive(MANAGER, p.id));
    await write(() => uc.catalog.update(MANAGER, p.id, { status: 'ACTIVE', description: 'Warm light' }));
    const lit = { ...state, description: 'Warm light' };
    expect(await newEvents(p.id)).toEqual([
      { subject: SUBJECTS.productArchived, actor: MANAGER, before: state, after: { ...state, status: 'ARCHIVED' }, changedFields: ['status'] },
      { subject: SUBJECTS.productReactivated, actor: MANAGER, before: { ...state, status: 'ARCHIVED' }, after: lit, changedFields: ['description', 'status'] },
    ]);
    await write(() => uc.catalog.adjustStock(MANAGER, p.id, { delta: 4 }));
    await write(() => uc.catalog.adjustStock(MANAGER, p.id, { setOnHand: 7 }));
    await write(() => uc.catalog.adjustStock(MANAGER, p.id, { setOnHand: 2 }));
    expect(await newEvents(p.id)).toEqual([
      { subject: SUBJECTS.productStockAdjusted, actor: MANAGER, before: lit, after: { ...lit, onHand: 7 }, changedFields: ['onHand'] },
      { subject: SUBJECTS.productStockAdjusted, actor: MANAGER, before: { ...lit, onHand: 7 }, after: { ...lit, onHand: 2 }, changedFields: ['onHand'] },
    ]);
  });

  it('catalog writes need products.manage now: no actor, a non-holder or a demoted holder is FORBIDDEN, no directory is UNAVAILABLE; nothing written, no event', async () => {
    const p = await uc.catalog.create(MANAGER, { sku: `R-${randomUUID().slice(0, 8)}`, name: 'Rug', priceMinor: 9_900, currency: 'EUR', onHand: 2 });
    await newEvents(p.id);
    const demoted = randomUUID();
    access.grant(demoted, 'products.manage');
    expect((await uc.catalog.update(demoted, p.id, { priceMinor: 9_000 })).priceMinor).toBe(9_000);
    access.revoke(demoted, 'products.manage');
    await newEvents(p.id);
    const writes = (actor: string | undefined) => [
      () => uc.catalog.create(actor, { sku: `R-${randomUUID().slice(0, 8)}`, name: 'Rug', priceMinor: 1, currency: 'EUR' }),
      () => uc.catalog.update(actor, p.id, { priceMinor: 1 }),
      () => uc.catalog.archive(actor, p.id),
      () => uc.catalog.adjustStock(actor, p.id, { delta: 5 }),
      // Refused before the input is looked at.
      () => uc.catalog.update(actor, 'not-a-uuid', { priceMinor: -1 }),
    ];
    for (const actor of [undefined, randomUUID(), demoted]) {
      for (const w of writes(actor)) await expect(w()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
    access.down = true;
    try {
      for (const w of writes(MANAGER)) await expect(w()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      access.down = false;
    }
    expect(await uc.catalog.get(p.id)).toMatchObject({ priceMinor: 9_000, status: 'ACTIVE', onHand: 2 });
    // A write that fails in its transaction publishes nothing either.
    const other = await uc.catalog.create(MANAGER, { sku: `R-${randomUUID().slice(0, 8)}`, name: 'Other rug', priceMinor: 1, currency: 'EUR' });
    await expect(uc.catalog.update(MANAGER, p.id, { sku: other.sku, priceMinor: 1 })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await newEvents(p.id)).toEqual([]);
    expect((await uc.catalog.get(p.id)).priceMinor).toBe(9_000);
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

/**
 * Active products cannot have names that look alike (migration 1764600000200): the same name in
 * any case, or a lookalike (UTS #39 skeletons) is a CONFLICT naming the field, also when two
 * creates race; an archived product's name is free, and reactivating it then conflicts. Real
 * PostgreSQL.
 */
import { AppError } from '@iam/platform';
import { type MigratedDatabase, TestAccess, migratedTestDatabase } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import { entities, migrations } from '../infra/schema';
import { createCommerceUseCases } from '../service';

describe('catalog: lookalike product names', () => {
  let db: MigratedDatabase;
  let uc: ReturnType<typeof createCommerceUseCases>;
  /** A products.manage holder (as the directory answers now). */
  const MANAGER = randomUUID();
  const create = (name: string) => uc.catalog.create(MANAGER, { sku: `N-${randomUUID().slice(0, 8)}`, name, priceMinor: 100, currency: 'EUR', onHand: 1 });
  const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof AppError ? { code: e.code, errors: e.errors } : e));
  const LOOKS_TAKEN = { code: 'CONFLICT', errors: [{ field: 'name', message: 'looks like a name already taken' }] };

  beforeAll(async () => {
    db = await migratedTestDatabase('commerce_names', { entities, migrations });
    uc = createCommerceUseCases(db.ds, new TestAccess().grant(MANAGER, 'products.manage'));
  });

  afterAll(async () => {
    await db?.close();
  });

  it('refuses the same name (any case) and lookalikes of an active product; an archived name is free; reactivating it conflicts', async () => {
    const t = randomUUID().slice(0, 8);
    const lamp = await create(`Desk lamp ${t}`);
    for (const name of [`Desk lamp ${t}`, `DESK LAMP ${t}`, `D\u0435sk lamp ${t}`, `Desk larnp ${t}`, `\ua4d3esk lamp ${t}`]) {
      expect([name, await outcome(create(name))]).toEqual([name, LOOKS_TAKEN]);
    }
    const other = await create(`Floor lamp ${t}`);
    expect(await outcome(uc.catalog.update(MANAGER, other.id, { name: `Desk lamp ${t}` }))).toEqual(LOOKS_TAKEN);
    expect((await uc.catalog.get(other.id)).name).toBe(`Floor lamp ${t}`);

    await uc.catalog.archive(MANAGER, lamp.id);
    const again = await create(`D\u0435sk lamp ${t}`);
    expect(again.status).toBe('ACTIVE');
    expect(await outcome(uc.catalog.update(MANAGER, lamp.id, { status: 'ACTIVE' }))).toEqual(LOOKS_TAKEN);
    expect((await uc.catalog.get(lamp.id)).status).toBe('ARCHIVED');
  });

  it('two creates of lookalike names at once: one product, one CONFLICT', async () => {
    const t = randomUUID().slice(0, 8);
    const outcomes = await Promise.all([outcome(create(`Paypal card ${t}`)), outcome(create(`P\u0430ypal card ${t}`))]);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([LOOKS_TAKEN]);
    expect((await uc.catalog.list({ pageSize: 100, pageToken: '', q: t })).products).toHaveLength(1);
  });
});

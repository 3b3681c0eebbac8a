/**
 * The demo catalog `make run` starts with: a dozen products with stock, written only when the
 * catalog is empty (under a transaction-scoped advisory lock, so replicas starting together seed
 * once). Safe to call on every start.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '@iam/platform';
import type { DataSource } from 'typeorm';
import type { NewProduct } from '../domain/ports';
import { pgStores } from '../infra/stores';

type DemoProduct = Omit<NewProduct, 'id'>;

export const DEMO_CATALOG: readonly DemoProduct[] = [
  { sku: 'MUG-001', name: 'Enamel camp mug', description: 'Speckled blue enamel mug, 350 ml.', priceMinor: 1_490, currency: 'EUR', onHand: 120 },
  { sku: 'TEE-001', name: 'Organic cotton T-shirt', description: 'Heavyweight crew neck, natural undyed cotton.', priceMinor: 2_900, currency: 'EUR', onHand: 80 },
  { sku: 'HOOD-001', name: 'Zip hoodie', description: 'Brushed fleece hoodie with a two-way zip.', priceMinor: 6_900, currency: 'EUR', onHand: 40 },
  { sku: 'CAP-001', name: 'Six-panel cap', description: 'Waxed cotton, adjustable brass buckle.', priceMinor: 2_400, currency: 'EUR', onHand: 60 },
  { sku: 'BAG-001', name: 'Canvas tote bag', description: 'Sturdy 12 oz canvas with an inner pocket.', priceMinor: 1_900, currency: 'EUR', onHand: 150 },
  { sku: 'NOTE-001', name: 'Dot-grid notebook', description: 'A5, 192 pages of 100 g/m² paper, lay-flat binding.', priceMinor: 1_600, currency: 'EUR', onHand: 200 },
  { sku: 'PEN-001', name: 'Brass pen', description: 'Solid brass body, refillable gel cartridge.', priceMinor: 3_500, currency: 'EUR', onHand: 50 },
  { sku: 'BOTTLE-001', name: 'Insulated bottle', description: 'Double-walled steel, keeps drinks cold for 24 h. 750 ml.', priceMinor: 3_200, currency: 'EUR', onHand: 70 },
  { sku: 'SOCK-001', name: 'Merino socks', description: 'Two pairs of cushioned merino wool socks.', priceMinor: 1_800, currency: 'EUR', onHand: 90 },
  { sku: 'STICK-001', name: 'Sticker pack', description: 'Ten vinyl stickers, weatherproof.', priceMinor: 600, currency: 'EUR', onHand: 500 },
  { sku: 'LAMP-001', name: 'Desk lamp', description: 'Dimmable LED desk lamp with a USB-C port.', priceMinor: 5_900, currency: 'EUR', onHand: 25 },
  { sku: 'POSTER-001', name: 'Limited print poster', description: 'Signed risograph print, 50 × 70 cm. Only a few left.', priceMinor: 4_500, currency: 'EUR', onHand: 5 },
];

/** Seeds DEMO_CATALOG when the catalog is empty; returns how many products it wrote (0 or 12). */
export async function seedDemoCatalog(ds: DataSource, logger?: Logger): Promise<number> {
  const seeded = await ds.transaction(async (m) => {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext('commerce:seed-demo'))`);
    const stores = pgStores(m);
    if ((await stores.products.count()) > 0) return 0;
    for (const p of DEMO_CATALOG) await stores.products.insert({ id: randomUUID(), ...p });
    // One transaction has one now(): spread created_at so the catalog lists in this order.
    await m.query(
      `UPDATE products p SET created_at = now() + (o.n * interval '1 millisecond'), updated_at = now() + (o.n * interval '1 millisecond')
         FROM unnest($1::text[]) WITH ORDINALITY AS o(sku, n) WHERE p.sku = o.sku`,
      [DEMO_CATALOG.map((p) => p.sku)],
    );
    return DEMO_CATALOG.length;
  });
  if (seeded > 0) logger?.info({ products: seeded }, 'demo catalog seeded');
  return seeded;
}

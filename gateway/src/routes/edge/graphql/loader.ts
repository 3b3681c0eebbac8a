/**
 * A per-request product loader (DataLoader's idea, without the dependency): every `load(id)` made
 * while one level of a query resolves is answered by one BatchGetProducts call, so a cart or a
 * page of orders with many lines costs one catalog call, not one per line. Ids are deduplicated
 * and remembered for the rest of the request; more ids than one call takes go in several calls.
 */
import type { commerceV1 } from '@iam/contracts';

/** BatchGetProducts takes at most this many ids. */
export const BATCH_MAX = 1_000;

export interface ProductLoader {
  /** The product, or null when the catalog has no such id. Rejects with the call's error. */
  load(id: string): Promise<commerceV1.Product | null>;
}

type Fetch = (ids: string[]) => Promise<commerceV1.Product[]>;

export function createProductLoader(fetch: Fetch): ProductLoader {
  const cache = new Map<string, Promise<commerceV1.Product | null>>();
  let queue: Array<{ id: string; resolve: (p: commerceV1.Product | null) => void; reject: (err: unknown) => void }> = [];

  const dispatch = (): void => {
    const batch = queue;
    queue = [];
    for (let i = 0; i < batch.length; i += BATCH_MAX) {
      const chunk = batch.slice(i, i + BATCH_MAX);
      fetch(chunk.map((e) => e.id)).then(
        (products) => {
          const byId = new Map(products.map((p) => [p.id.toLowerCase(), p]));
          for (const e of chunk) e.resolve(byId.get(e.id) ?? null);
        },
        (err: unknown) => {
          for (const e of chunk) {
            // A failed id is not remembered: a later level of the query may try again.
            cache.delete(e.id);
            e.reject(err);
          }
        },
      );
    }
  };

  return {
    load(id) {
      const key = id.toLowerCase();
      const hit = cache.get(key);
      if (hit) return hit;
      const p = new Promise<commerceV1.Product | null>((resolve, reject) => {
        queue.push({ id: key, resolve, reject });
        // After the promise jobs of this tick (the sibling resolvers of a list are called in one
        // go), as DataLoader does.
        if (queue.length === 1) void Promise.resolve().then(() => process.nextTick(dispatch));
      });
      cache.set(key, p);
      return p;
    },
  };
}

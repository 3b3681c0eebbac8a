import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { integer } from '../api/fields';
import { type Product, type ProductStatus, price, productKeys, products } from '../api/products';
import { can } from '../auth/session';
import { Link, navigate } from '../router';
import { Scroll, SearchBox } from '../components/list';
import { ConfirmButton, Form, type FormValues, Notice, ProblemAlert } from '../components/ui';
import { type NamesOf, PRODUCT_CREATE_FIELDS, PRODUCT_EDIT_FIELDS, STOCK_FIELDS } from '../forms';

const PAGE_SIZE = 20;
const MANAGE = 'products.manage';

/**
 * The catalog: public to read (the edge API), administered with products.manage (create, edit,
 * archive, adjust stock). Pages are keyset pages (nextPageToken); "Previous" walks back the tokens.
 */
export function ProductsPage() {
  const manage = can(MANAGE);
  const [q, setQ] = useState('');
  const [status, setStatus] = useState<'' | ProductStatus>('');
  const [tokens, setTokens] = useState<string[]>([]);
  const pageToken = tokens[tokens.length - 1];
  const list = useQuery({
    queryKey: [...productKeys.all, { q, status, pageToken, manage }],
    queryFn: () => products.list({ pageSize: PAGE_SIZE, pageToken, q: q || undefined, status: status || undefined }, manage),
  });
  const restart = () => setTokens([]);
  return (
    <>
      <h1 tabIndex={-1}>Products</h1>
      {manage ? <p><Link to="/products/new" className="button">Create product</Link></p> : null}
      <SearchBox id="product-q" label="Search products" value={q} onChange={(v) => { setQ(v); restart(); }}>
        <label htmlFor="product-status">Status</label>
        <select id="product-status" value={status} onChange={(e) => { setStatus(e.target.value as '' | ProductStatus); restart(); }}>
          <option value="">Any</option>
          <option value="ACTIVE">Active</option>
          <option value="ARCHIVED">Archived</option>
        </select>
      </SearchBox>
      <ProblemAlert error={list.error} />
      {list.data ? (
        <>
          <Scroll label="Products">
            <table>
              <caption>Products{tokens.length ? `, page ${tokens.length + 1}` : ''}</caption>
              <thead>
                <tr>
                  <th scope="col">SKU</th><th scope="col">Name</th><th scope="col">Price</th><th scope="col">Status</th><th scope="col">Available</th>
                  {manage ? <th scope="col">On hand / reserved</th> : null}
                </tr>
              </thead>
              <tbody>
                {list.data.products.map((p) => (
                  <tr key={p.id}>
                    <td><code>{p.sku}</code></td>
                    <td>{manage ? <Link to={`/products/${p.id}`}>{p.name}</Link> : p.name}</td>
                    <td>{price(p.priceMinor, p.currency)}</td>
                    <td>{p.status === 'ACTIVE' ? 'Active' : 'Archived'}</td>
                    <td>{p.available}</td>
                    {manage ? <td>{p.stock ? `${p.stock.onHand} / ${p.stock.reserved}` : '—'}</td> : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <nav aria-label="Pages" className="pager">
            <button type="button" disabled={tokens.length === 0} onClick={() => setTokens(tokens.slice(0, -1))}>Previous</button>
            <button type="button" disabled={!list.data.nextPageToken} onClick={() => setTokens([...tokens, list.data.nextPageToken!])}>Next</button>
          </nav>
        </>
      ) : list.isPending ? <p>Loading…</p> : null}
    </>
  );
}

export function ProductCreatePage() {
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: (v: FormValues<NamesOf<typeof PRODUCT_CREATE_FIELDS>>) =>
      products.create({
        sku: v.sku,
        name: v.name,
        description: v.description,
        priceMinor: integer('priceMinor', v.priceMinor) ?? Number.NaN,
        currency: v.currency.toUpperCase(),
        onHand: integer('onHand', v.onHand),
      }),
    onSuccess: async (p) => { await qc.invalidateQueries({ queryKey: productKeys.all }); navigate(`/products/${p.id}`); },
  });
  return (
    <>
      <h1 tabIndex={-1}>Create product</h1>
      <Form
        fields={PRODUCT_CREATE_FIELDS}
        initial={{ currency: 'EUR', onHand: '0' }}
        submitLabel="Create"
        error={create.error}
        onSubmit={(v) => create.mutateAsync(v)}
      />
      <p><Link to="/products">Back to products</Link></p>
    </>
  );
}

/** One product's administration (products.manage, checked by the route). */
export function ProductPage({ id }: { id: string }) {
  const qc = useQueryClient();
  const product = useQuery({ queryKey: [...productKeys.all, id], queryFn: () => products.get(id, true) });
  const [notice, setNotice] = useState('');
  const done = (message: string) => async () => { setNotice(message); await qc.invalidateQueries({ queryKey: productKeys.all }); };
  const update = useMutation({
    mutationFn: (v: FormValues<NamesOf<typeof PRODUCT_EDIT_FIELDS>>) =>
      products.update(id, { sku: v.sku, name: v.name, description: v.description, priceMinor: integer('priceMinor', v.priceMinor), currency: v.currency.toUpperCase() }),
    onSuccess: done('Saved.'),
  });
  const archive = useMutation({ mutationFn: () => products.archive(id), onSuccess: done('Archived: no longer for sale.') });
  const reactivate = useMutation({ mutationFn: () => products.update(id, { status: 'ACTIVE' }), onSuccess: done('Back on sale.') });
  const stock = useMutation({
    mutationFn: (v: FormValues<NamesOf<typeof STOCK_FIELDS>>) => {
      const delta = integer('delta', v.delta);
      const setOnHand = integer('setOnHand', v.setOnHand);
      return products.adjustStock(id, delta !== undefined ? { delta } : { setOnHand });
    },
    onSuccess: done('Stock changed.'),
  });
  const p: Product | null | undefined = product.data;
  return (
    <>
      <h1 tabIndex={-1}>Product {p ? p.name : ''}</h1>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={product.error ?? archive.error ?? reactivate.error} />
      {product.isSuccess && !p ? <p>There is no such product.</p> : null}
      {p ? (
        <>
          <dl className="claims">
            <dt>Status</dt><dd>{p.status === 'ACTIVE' ? 'Active' : 'Archived'}</dd>
            <dt>Price</dt><dd>{price(p.priceMinor, p.currency)}</dd>
            <dt>Stock</dt><dd>{p.stock ? `${p.stock.onHand} on hand, ${p.stock.reserved} reserved, ${p.stock.available} available` : '—'}</dd>
          </dl>
          <section aria-labelledby="edit-product">
            <h2 id="edit-product">Details</h2>
            <Form
              key={`${p.sku}|${p.name}|${p.description}|${p.priceMinor}|${p.currency}`}
              fields={PRODUCT_EDIT_FIELDS}
              initial={{ sku: p.sku, name: p.name, description: p.description, priceMinor: String(p.priceMinor), currency: p.currency }}
              submitLabel="Save"
              error={update.error}
              onSubmit={(v) => update.mutateAsync(v)}
            />
          </section>
          <section aria-labelledby="product-stock">
            <h2 id="product-stock">Adjust stock</h2>
            <p>Give a change (e.g. 10 or -3) or a new count of units on hand, never below what orders reserve.</p>
            <Form
              key={`stock-${p.stock?.onHand}`}
              fields={STOCK_FIELDS}
              submitLabel="Adjust stock"
              error={stock.error}
              onSubmit={(v) => stock.mutateAsync(v)}
            />
          </section>
          <section aria-labelledby="product-sale">
            <h2 id="product-sale">Sale</h2>
            {p.status === 'ACTIVE' ? (
              <ConfirmButton label="Archive" name={`Archive ${p.sku}`} confirmLabel={`Confirm archive of ${p.sku}`} onConfirm={() => archive.mutate()} />
            ) : (
              <button type="button" onClick={() => reactivate.mutate()}>Put back on sale</button>
            )}
          </section>
        </>
      ) : null}
      <p><Link to="/products">Back to products</Link></p>
    </>
  );
}

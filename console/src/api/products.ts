/** Product administration over the edge GraphQL API (products.manage; reads are public). */
import { gql } from './graphql';
import type { AdjustStockInput, CreateProductInput, ProductStatus, UpdateProductInput } from './limits.generated';

export type { ProductStatus } from './limits.generated';

export interface Product {
  id: string;
  sku: string;
  name: string;
  description: string;
  priceMinor: number;
  currency: string;
  status: ProductStatus;
  available: number;
  stock?: { onHand: number; reserved: number; available: number };
}

export interface ProductPage {
  products: Product[];
  nextPageToken: string | null;
}

const FIELDS = 'id sku name description priceMinor currency status available';
/** Stock detail is for products.manage holders only (FORBIDDEN otherwise): asked for only then. */
const fields = (withStock: boolean) => (withStock ? `${FIELDS} stock { onHand reserved available }` : FIELDS);

export const productKeys = { all: ['products'] as const };

export const products = {
  list: (v: { pageSize: number; pageToken?: string; status?: ProductStatus; q?: string }, withStock: boolean) =>
    gql<{ products: ProductPage }>(
      `query($pageSize: Int, $pageToken: String, $status: ProductStatus, $q: String) {
        products(pageSize: $pageSize, pageToken: $pageToken, status: $status, q: $q) { products { ${fields(withStock)} } nextPageToken }
      }`,
      v,
    ).then((d) => d.products),
  get: (id: string, withStock: boolean) =>
    gql<{ product: Product | null }>(`query($id: ID!) { product(id: $id) { ${fields(withStock)} } }`, { id }).then((d) => d.product),
  create: (input: CreateProductInput) =>
    gql<{ createProduct: Product }>(`mutation($input: CreateProductInput!) { createProduct(input: $input) { ${fields(true)} } }`, { input }).then((d) => d.createProduct),
  update: (id: string, input: UpdateProductInput) =>
    gql<{ updateProduct: Product }>(`mutation($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { ${fields(true)} } }`, { id, input }).then(
      (d) => d.updateProduct,
    ),
  archive: (id: string) => gql<{ archiveProduct: Product }>(`mutation($id: ID!) { archiveProduct(id: $id) { ${fields(true)} } }`, { id }).then((d) => d.archiveProduct),
  adjustStock: (id: string, input: AdjustStockInput) =>
    gql<{ adjustStock: Product }>(`mutation($id: ID!, $input: AdjustStockInput!) { adjustStock(id: $id, input: $input) { ${fields(true)} } }`, { id, input }).then(
      (d) => d.adjustStock,
    ),
};

/** 1999 EUR → "19.99 EUR" (two decimals except the zero-decimal currencies listed). */
const ZERO_DECIMAL = new Set(['JPY', 'KRW', 'VND', 'CLP', 'ISK', 'UGX', 'XAF', 'XOF']);
export function price(minor: number, currency: string): string {
  return ZERO_DECIMAL.has(currency) ? `${minor} ${currency}` : `${(minor / 100).toFixed(2)} ${currency}`;
}

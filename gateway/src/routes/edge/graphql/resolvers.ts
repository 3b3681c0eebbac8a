/**
 * The resolvers: each checks who may ask (per field: products are public, the cart and orders
 * need a principal and act for its `sub`, administration needs products.manage), makes one
 * commerce call naming the caller, and shapes the answer (../commerce.ts). Errors are thrown as
 * they come; ./index.ts formats them (../errors.ts).
 */
import type { commerceV1 } from '@iam/contracts';
import { type AccessClaims, AppError, hasPermission, isUuid } from '@iam/platform/core';
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import type { CommerceClients } from '../../../upstreams';
import {
  type OrderStatusName,
  type ProductNode,
  type ProductStatusName,
  cartNode,
  nextToken,
  orderNode,
  orderStatusFilter,
  productNode,
  productStatusFilter,
  productStatusValue,
} from '../commerce';
import type { ProductLoader } from './loader';
import { DEFAULT_PAGE_SIZE } from './schema';

export const PRODUCTS_MANAGE = 'products.manage';

export interface EdgeContext {
  /** The verified bearer token's claims; null for an anonymous request. */
  readonly principal: AccessClaims | null;
  readonly products: ProductLoader;
}

/** The caller, or UNAUTHENTICATED. */
function customer(ctx: EdgeContext): AccessClaims {
  if (!ctx.principal) throw AppError.unauthenticated('This needs a bearer token (Authorization: Bearer <token>).');
  return ctx.principal;
}

function administrator(ctx: EdgeContext): AccessClaims {
  const p = customer(ctx);
  if (!hasPermission(p, PRODUCTS_MANAGE)) throw AppError.forbidden(`This requires the ${PRODUCTS_MANAGE} permission.`);
  return p;
}

/** A product id read through the loader must be a UUID (the batch call refuses the whole batch otherwise). */
function productId(id: string): string {
  if (!isUuid(id)) throw AppError.validation('The id is not a UUID.', [{ field: 'id', message: 'must be a UUID' }]);
  return id;
}

/** A query's missing resource is null; anything else is an error. */
async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const safeInt = (v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new GraphQLError(`SafeInt must be an integer from ${-MAX_SAFE} to ${MAX_SAFE}.`);
  return v;
};

const SafeInt = new GraphQLScalarType({
  name: 'SafeInt',
  serialize: safeInt,
  parseValue: safeInt,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new GraphQLError('SafeInt must be an integer literal.', { nodes: ast });
    return safeInt(Number(ast.value));
  },
});

const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (v) => {
    if (!(v instanceof Date) || Number.isNaN(v.getTime())) throw new GraphQLError('DateTime must be a date.');
    return v.toISOString();
  },
  parseValue: () => {
    throw new GraphQLError('DateTime is not an input.');
  },
  parseLiteral: () => {
    throw new GraphQLError('DateTime is not an input.');
  },
});

/** A scalar as mercurius takes it: the functions it copies onto the schema's type. */
const scalar = (t: GraphQLScalarType) => ({ serialize: t.serialize, parseValue: t.parseValue, parseLiteral: t.parseLiteral });

interface PageArgs {
  /** null when the query passes null explicitly (its default applies only when it is absent). */
  pageSize: number | null;
  pageToken?: string | null;
}
interface LineInput {
  productId: string;
  quantity: number;
}
interface CheckoutArgs {
  input: { idempotencyKey: string; lines?: LineInput[] | null };
}
interface ProductFields {
  sku?: string | null;
  name?: string | null;
  description?: string | null;
  priceMinor?: number | null;
  currency?: string | null;
  status?: ProductStatusName | null;
}

/** Absent and null mean the same for an optional input field. */
const given = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

export function edgeResolvers(commerce: CommerceClients) {
  const { catalog, carts, orders } = commerce;

  const checkout = async (_: unknown, { input }: CheckoutArgs, ctx: EdgeContext) => {
    const { sub, email } = customer(ctx);
    const lines = (input.lines ?? []).map((l) => ({ productId: l.productId, quantity: l.quantity }));
    const r = await orders.checkout({ customerId: sub, idempotencyKey: input.idempotencyKey, lines, customerEmail: email ?? '' });
    return orderNode(r.order!);
  };

  return {
    SafeInt: scalar(SafeInt),
    DateTime: scalar(DateTime),

    Query: {
      products: async (_: unknown, a: PageArgs & { status?: ProductStatusName | null; q?: string | null }) => {
        const page = await catalog.listProducts({ pageSize: a.pageSize ?? DEFAULT_PAGE_SIZE, pageToken: a.pageToken ?? '', status: productStatusFilter(a.status), q: a.q ?? '' });
        return { products: page.products.map(productNode), nextPageToken: nextToken(page.nextPageToken) };
      },
      product: async (_: unknown, { id }: { id: string }, ctx: EdgeContext) => {
        const p = await ctx.products.load(productId(id));
        return p && productNode(p);
      },
      cart: async (_: unknown, __: unknown, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        return cartNode(await carts.getCart({ customerId: sub }));
      },
      orders: async (_: unknown, a: PageArgs & { status?: OrderStatusName | null }, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        const page = await orders.listOrders({ customerId: sub, pageSize: a.pageSize ?? DEFAULT_PAGE_SIZE, pageToken: a.pageToken ?? '', status: orderStatusFilter(a.status) });
        return { orders: page.orders.map(orderNode), nextPageToken: nextToken(page.nextPageToken) };
      },
      order: async (_: unknown, { id }: { id: string }, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        const o = await orNull(orders.getOrder({ customerId: sub, id }));
        return o && orderNode(o);
      },
    },

    Mutation: {
      updateCart: async (_: unknown, { lines }: { lines: LineInput[] }, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        return cartNode(await carts.replaceCart({ customerId: sub, lines: lines.map((l) => ({ productId: l.productId, quantity: l.quantity })) }));
      },
      clearCart: async (_: unknown, __: unknown, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        return cartNode(await carts.clearCart({ customerId: sub }));
      },
      checkout,
      createOrder: checkout,
      cancelOrder: async (_: unknown, { id }: { id: string }, ctx: EdgeContext) => {
        const { sub } = customer(ctx);
        return orderNode(await orders.cancelOrder({ customerId: sub, id }));
      },

      createProduct: async (_: unknown, { input: i }: { input: Required<ProductFields> & { onHand: number } }, ctx: EdgeContext) => {
        administrator(ctx);
        const req: commerceV1.CreateProductRequest = { sku: i.sku!, name: i.name!, description: i.description ?? '', priceMinor: i.priceMinor!, currency: i.currency!, onHand: i.onHand ?? 0 };
        return productNode(await catalog.createProduct(req));
      },
      updateProduct: async (_: unknown, { id, input: i }: { id: string; input: ProductFields }, ctx: EdgeContext) => {
        administrator(ctx);
        const req: commerceV1.UpdateProductRequest = {
          id,
          sku: given(i.sku),
          name: given(i.name),
          description: given(i.description),
          priceMinor: given(i.priceMinor),
          currency: given(i.currency),
          status: i.status ? productStatusValue(i.status) : undefined,
        };
        return productNode(await catalog.updateProduct(req));
      },
      archiveProduct: async (_: unknown, { id }: { id: string }, ctx: EdgeContext) => {
        administrator(ctx);
        return productNode(await catalog.archiveProduct({ id }));
      },
      adjustStock: async (_: unknown, { id, input }: { id: string; input: { delta?: number | null; setOnHand?: number | null } }, ctx: EdgeContext) => {
        administrator(ctx);
        const delta = given(input.delta);
        const setOnHand = given(input.setOnHand);
        if ((delta === undefined) === (setOnHand === undefined)) {
          throw AppError.validation('Give exactly one of delta and setOnHand.', [{ field: 'input', message: 'needs exactly one of delta and setOnHand' }]);
        }
        return productNode(await catalog.adjustStock({ id, delta, setOnHand }));
      },
    },

    Product: {
      stock: (p: ProductNode, _: unknown, ctx: EdgeContext) => (administrator(ctx), p.stock),
    },
    CartLine: {
      product: async (l: { productId: string }, _: unknown, ctx: EdgeContext) => {
        const p = await ctx.products.load(l.productId);
        return p && productNode(p);
      },
    },
    OrderLine: {
      product: async (l: { productId: string }, _: unknown, ctx: EdgeContext) => {
        const p = await ctx.products.load(l.productId);
        return p && productNode(p);
      },
    },
  };
}

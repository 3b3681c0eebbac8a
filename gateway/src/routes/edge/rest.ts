/**
 * The edge profile's anonymous REST routes (spec §4.3, DESIGN §2 "Edge BFF"): /healthz and the
 * public catalog, /api/v1/products (paged by an opaque token) and /api/v1/products/{id}.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { HealthMonitor } from '@iam/platform/core';
import { IdParams, problems } from '../../schemas/common';
import { Healthz, OneProduct, PRODUCTS_PAGE_SIZE_DEFAULT, ProductPage, ProductsQuery } from '../../schemas/edge';
import type { CommerceClients } from '../../upstreams';
import { type ProductStatusName, nextToken, productJson, productStatusFilter } from './commerce';
import { restErrorOf } from './errors';

/** Commerce names the list inputs as its request does; the route as its query string does (as its schema's errors do). */
const QUERY_FIELDS = { pageSize: 'querystring.page_size', pageToken: 'querystring.page_token', status: 'querystring.status', q: 'querystring.q' };

/** The query's spelling of a status → commerce's. */
const STATUS_NAMES: Readonly<Record<'active' | 'archived', ProductStatusName>> = { active: 'ACTIVE', archived: 'ARCHIVED' };

export interface EdgeRestOptions {
  readonly commerce: CommerceClients;
  readonly health: HealthMonitor;
}

export const edgeRestRoutes: FastifyPluginAsyncTypebox<EdgeRestOptions> = async (app, deps) => {
  const { catalog } = deps.commerce;
  app.get(
    '/healthz',
    { schema: { tags: ['edge'], summary: 'Readiness and liveness of the edge (503 while the commerce service is unreachable)', response: { 200: Healthz, 503: Healthz } } },
    async (_req, reply) => {
      const up = deps.health.snapshot().checks.commerce === 'up';
      return reply.code(up ? 200 : 503).send({ status: up ? 'ok' : 'unavailable' });
    },
  );

  app.get(
    '/api/v1/products',
    {
      schema: {
        tags: ['products'],
        summary: 'List products (public), oldest first, paged by an opaque token',
        querystring: ProductsQuery,
        response: { 200: ProductPage, ...problems(400) },
      },
    },
    async (req) => {
      const q = req.query;
      const page = await catalog
        .listProducts({
          pageSize: q.page_size ?? PRODUCTS_PAGE_SIZE_DEFAULT,
          pageToken: q.page_token ?? '',
          status: productStatusFilter(q.status === undefined ? undefined : STATUS_NAMES[q.status]),
          q: q.q ?? '',
        })
        .catch((err: unknown) => Promise.reject(restErrorOf(err, QUERY_FIELDS)));
      return { products: page.products.map(productJson), nextPageToken: nextToken(page.nextPageToken) };
    },
  );

  app.get(
    '/api/v1/products/:id',
    { schema: { tags: ['products'], summary: 'Get one product (public)', params: IdParams, response: { 200: OneProduct, ...problems(400, 404) } } },
    async (req) => ({ product: productJson(await catalog.getProduct({ id: req.params.id })) }),
  );
};

/**
 * The edge profile (spec §4.3, DESIGN §2 "Edge BFF"), by audience (../audiences.ts):
 *
 *   anonymous                 /healthz, GET /api/v1/products, GET /api/v1/products/{id} (./rest.ts)
 *   optionallyAuthenticated   /api/v1/graphql (./graphql): products public; cart, orders and
 *                             checkout for the token's subject; administration with
 *                             products.manage, decided per field
 *
 * Every call goes to the commerce service (CatalogService, CartService, OrderService); its errors
 * are mapped in ./errors.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { ProfileDeps } from '../index';
import { graphqlRoutes } from './graphql';
import { edgeRestRoutes } from './rest';

export async function edgeProfile(app: FastifyInstance, deps: ProfileDeps): Promise<void> {
  const commerce = deps.upstreams.commerce;
  if (!commerce) throw new Error('the edge profile needs the commerce service (COMMERCE_GRPC_TARGET)');
  await app.register(edgeRestRoutes, { commerce, health: deps.health });
  await app.register(
    graphqlRoutes({ commerce, authenticator: deps.authenticator, config: deps.graphql, checkoutLimits: { subject: deps.rateLimits.checkout, address: deps.rateLimits.checkoutAddress }, logger: deps.logger }),
  );
}

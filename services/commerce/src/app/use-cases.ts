/** Commerce's use cases, as the composition root (service.ts) builds them and the gRPC handlers call them. */
import type { CartUseCases } from './carts';
import type { CatalogUseCases } from './catalog';
import type { OrderUseCases } from './orders';

export interface CommerceUseCases {
  readonly catalog: CatalogUseCases;
  readonly carts: CartUseCases;
  readonly orders: OrderUseCases;
}

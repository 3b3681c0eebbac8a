import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000 } from '@iam/platform';
import { CartLineRow, CartRow, IdempotencyRecordRow, OrderLineRow, OrderRow, ProductRow, StockRow } from './entities';
import { CommerceSchema1764000000500 } from './migrations/1764000000500-commerce-schema';
import { IdempotencyRecordsCreatedIndex1764500000100 } from './migrations/1764500000100-idempotency-records-created-index';
import { ProductNameSkeletons1764600000200 } from './migrations/1764600000200-product-name-skeletons';

export const entities = [ProductRow, StockRow, CartRow, CartLineRow, OrderRow, OrderLineRow, IdempotencyRecordRow, OutboxEventRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, CommerceSchema1764000000500, OutboxHeaders1764200000200, IdempotencyRecordsCreatedIndex1764500000100, ProductNameSkeletons1764600000200, OutboxLease1764900000000];

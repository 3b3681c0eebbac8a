import { CreateOutbox1763800000000, OutboxEventRow, OutboxHeaders1764200000200, OutboxLease1764900000000 } from '@iam/platform';
import { DeliveryRow } from './entities';
import { Deliveries1763800000400 } from './migrations/1763800000400-deliveries';
import { DeliverySending1764700000400 } from './migrations/1764700000400-delivery-sending';
import { Webhooks1766000000400 } from './migrations/1766000000400-webhooks';
import { WebhookAttemptRow, WebhookEndpointRow, WebhookMessageRow } from './webhooks/entities';

export const entities = [DeliveryRow, OutboxEventRow, WebhookEndpointRow, WebhookMessageRow, WebhookAttemptRow];

/** In order; never edit one that has landed, add a new one. */
export const migrations = [CreateOutbox1763800000000, Deliveries1763800000400, OutboxHeaders1764200000200, DeliverySending1764700000400, OutboxLease1764900000000, Webhooks1766000000400];

import { notificationV1 } from '@iam/contracts';
import { AppError, type HandlerDeps, type ServiceBinding, bindService } from '@iam/platform';
import type { Delivery, DeliveryStatus, DeliveryStore } from '../domain/ports';

const STATUS: Record<DeliveryStatus, notificationV1.DeliveryStatus> = {
  sending: notificationV1.DeliveryStatus.DELIVERY_STATUS_SENDING,
  sent: notificationV1.DeliveryStatus.DELIVERY_STATUS_SENT,
  retrying: notificationV1.DeliveryStatus.DELIVERY_STATUS_RETRYING,
  dead_lettered: notificationV1.DeliveryStatus.DELIVERY_STATUS_DEAD_LETTERED,
  recorded: notificationV1.DeliveryStatus.DELIVERY_STATUS_RECORDED,
};
const BY_PROTO = new Map(Object.entries(STATUS).map(([k, v]) => [v, k as DeliveryStatus]));
// What a client from before SENDING asks for as PENDING.
BY_PROTO.set(notificationV1.DeliveryStatus.DELIVERY_STATUS_PENDING, 'sending');

const toProto = (d: Delivery): notificationV1.Delivery => ({ ...d, status: STATUS[d.status] });

/** Delivery records for operators. */
export function notificationGrpc(deliveries: DeliveryStore, h: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      notificationV1.NotificationServiceService,
      {
        listDeliveries: async (r) => {
          const page = r.page || 1;
          const pageSize = r.pageSize || 25;
          if (page < 1 || pageSize < 1 || pageSize > 100) throw AppError.validation('page ≥ 1 and pageSize 1..100', [{ field: 'pageSize', message: 'must be 1..100' }]);
          const res = await deliveries.list({ page, pageSize, status: BY_PROTO.get(r.status), recipient: r.recipient || undefined });
          return { items: res.items.map(toProto), totalCount: res.totalCount };
        },
        getDelivery: async (r) => {
          const d = await deliveries.get(r.eventId);
          if (!d) throw AppError.notFound('No delivery for this event.');
          return toProto(d);
        },
      },
      h,
      // Delivery records name addresses: for the platform's own components only.
      ['gateway'],
    ),
  ];
}

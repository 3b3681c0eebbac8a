/**
 * The WebhookService (gRPC) over the endpoint use cases: for the gateway only, acting for a user
 * who holds webhooks.manage now (the directory's AccessService, asked on every call: a token
 * issued before the permission was taken away is not enough). Shapes only; the use cases decide.
 */
import { webhooksV1 } from '@iam/contracts';
import { type AccessCheck, AppError, type CallContext, type HandlerDeps, type ServiceBinding, actorOf, bindService, isUuid, requireCurrentPermission } from '@iam/platform';
import type { MessageStatus, WebhookAttempt, WebhookEndpoint, WebhookMessage } from '../domain/webhooks';
import type { EndpointUseCases } from '../app/webhooks/endpoints';

export const WEBHOOKS_MANAGE = 'webhooks.manage';

const endpointProto = (e: WebhookEndpoint): webhooksV1.WebhookEndpoint => ({
  id: e.id,
  url: e.url,
  description: e.description,
  eventTypes: [...e.eventTypes],
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  publicKey: e.publicKey,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
  deletedAt: e.deletedAt ?? undefined,
  previousSecretExpiresAt: e.previousExpiresAt ?? undefined,
  failingSince: e.failingSince ?? undefined,
  pending: e.pending,
  dead: e.dead,
});

const messageProto = (m: WebhookMessage): webhooksV1.WebhookMessage => ({
  ...m,
  nextAttemptAt: m.nextAttemptAt ?? undefined,
  deliveredAt: m.deliveredAt ?? undefined,
  lastStatusCode: m.lastStatusCode ?? 0,
});

const attemptProto = (a: WebhookAttempt): webhooksV1.WebhookAttempt => ({ ...a, statusCode: a.statusCode ?? 0 });

function paging(page: number, pageSize: number): { page: number; pageSize: number } {
  const p = page || 1;
  const s = pageSize || 25;
  if (p < 1 || s < 1 || s > 100) throw AppError.validation('page ≥ 1 and pageSize 1..100', [{ field: 'pageSize', message: 'must be 1..100' }]);
  return { page: p, pageSize: s };
}

function endpointId(id: string): string {
  if (!isUuid(id)) throw AppError.notFound('No such webhook endpoint.');
  return id;
}

const STATUSES = new Set<MessageStatus>(['pending', 'delivered', 'dead']);

export function webhooksGrpc(uc: EndpointUseCases, access: AccessCheck, h: HandlerDeps): ServiceBinding {
  const authorized =
    <Req, Res>(fn: (r: Req) => Promise<Res>) =>
    async (r: Req, ctx: CallContext): Promise<Res> => {
      await requireCurrentPermission(access, actorOf(ctx), WEBHOOKS_MANAGE);
      return fn(r);
    };
  return bindService(
    webhooksV1.WebhookServiceService,
    {
      listEndpoints: authorized(async (r) => {
        const res = await uc.list({ ...paging(r.page, r.pageSize), q: r.q || undefined, includeDeleted: r.includeDeleted });
        return { items: res.items.map(endpointProto), totalCount: res.totalCount };
      }),
      getEndpoint: authorized(async (r) => endpointProto(await uc.get(endpointId(r.id), r.includeDeleted))),
      createEndpoint: authorized(async (r) => {
        const res = await uc.create({ url: r.url, description: r.description, eventTypes: r.eventTypes, enabled: r.enabled, ed25519: r.ed25519 });
        return { endpoint: endpointProto(res.endpoint), secret: res.secret };
      }),
      updateEndpoint: authorized(async (r) =>
        endpointProto(await uc.update(endpointId(r.id), { url: r.url, description: r.description, eventTypes: r.eventTypes?.values, enabled: r.enabled })),
      ),
      deleteEndpoint: authorized(async (r) => {
        const id = endpointId(r.id);
        await uc.remove(id);
        return endpointProto(await uc.get(id, true));
      }),
      rotateSecret: authorized(async (r) => {
        const res = await uc.rotate(endpointId(r.id));
        return { endpoint: endpointProto(res.endpoint), secret: res.secret };
      }),
      sendTest: authorized(async (r) => ({ messageId: await uc.sendTest(endpointId(r.id)) })),
      listMessages: authorized(async (r) => {
        if (r.status && !STATUSES.has(r.status as MessageStatus)) throw AppError.validation('Unknown status.', [{ field: 'status', message: 'pending, delivered or dead' }]);
        const res = await uc.messages(endpointId(r.endpointId), { ...paging(r.page, r.pageSize), status: (r.status || undefined) as MessageStatus | undefined, since: r.since, until: r.until });
        return { items: res.items.map(messageProto), totalCount: res.totalCount };
      }),
      listAttempts: authorized(async (r) => {
        const res = await uc.attempts(endpointId(r.endpointId), { ...paging(r.page, r.pageSize), messageId: r.messageId || undefined });
        return { items: res.items.map(attemptProto), totalCount: res.totalCount };
      }),
      replayMessage: authorized(async (r) => messageProto(await uc.replayOne(endpointId(r.endpointId), r.messageId))),
      replayFailed: authorized(async (r) => {
        if (!r.since || !r.until) throw AppError.validation('since and until are required.', [{ field: r.since ? 'until' : 'since', message: 'required' }]);
        return { replayed: await uc.replayFailed(endpointId(r.endpointId), r.since, r.until) };
      }),
    },
    h,
    ['gateway'],
  );
}

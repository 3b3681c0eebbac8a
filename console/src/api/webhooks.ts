/** The outgoing webhooks API (webhooks.manage): typed calls and TanStack Query keys. */
import { api, call } from './client';
import type { paths } from './schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok200<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } } ? Json<R> : never;

export type WebhookPage = Extract<Ok200<'/api/v1/webhooks', 'get'>, { items: unknown }>;
export type Webhook = Ok200<'/api/v1/webhooks/{id}', 'get'>;
export type WebhookBody = NonNullable<paths['/api/v1/webhooks']['post']['requestBody']>['content']['application/json'];
export type WebhookUpdate = NonNullable<paths['/api/v1/webhooks/{id}']['put']['requestBody']>['content']['application/json'];
/** An endpoint with its signing secret: the answers of create and rotate only. */
export type WebhookWithSecret = Webhook & { secret: string };
export type MessagePage = Ok200<'/api/v1/webhooks/{id}/messages', 'get'>;
export type WebhookMessage = MessagePage['items'][number];
export type AttemptPage = Ok200<'/api/v1/webhooks/{id}/attempts', 'get'>;
export type WebhookAttempt = AttemptPage['items'][number];
export type EventTypes = Ok200<'/api/v1/webhooks/event-types', 'get'>;

export const webhookKeys = { all: ['webhooks'] as const, types: ['webhooks', 'event-types'] as const };

const path = (id: string) => ({ params: { path: { id } } });

export const webhooks = {
  list: (q: { page: number; pageSize: number; q?: string }) =>
    call(() => api.GET('/api/v1/webhooks', { params: { query: { page: q.page, pageSize: q.pageSize, ...(q.q ? { q: q.q } : {}) } } })) as Promise<WebhookPage>,
  get: (id: string) => call(() => api.GET('/api/v1/webhooks/{id}', path(id))) as Promise<Webhook>,
  eventTypes: () => call(() => api.GET('/api/v1/webhooks/event-types')) as Promise<EventTypes>,
  create: (body: WebhookBody) => call(() => api.POST('/api/v1/webhooks', { body })) as Promise<WebhookWithSecret>,
  update: (id: string, body: WebhookUpdate) => call(() => api.PUT('/api/v1/webhooks/{id}', { ...path(id), body })) as Promise<Webhook>,
  remove: (id: string) => call(() => api.DELETE('/api/v1/webhooks/{id}', path(id))),
  rotateSecret: (id: string) => call(() => api.POST('/api/v1/webhooks/{id}/secret', path(id))) as Promise<WebhookWithSecret>,
  test: (id: string) => call(() => api.POST('/api/v1/webhooks/{id}/test', path(id))),
  messages: (id: string, q: { page: number; pageSize: number; status?: 'pending' | 'delivered' | 'dead' }) =>
    call(() => api.GET('/api/v1/webhooks/{id}/messages', { params: { path: { id }, query: { page: q.page, pageSize: q.pageSize, ...(q.status ? { status: q.status } : {}) } } })) as Promise<MessagePage>,
  attempts: (id: string, q: { page: number; pageSize: number }) =>
    call(() => api.GET('/api/v1/webhooks/{id}/attempts', { params: { path: { id }, query: { page: q.page, pageSize: q.pageSize } } })) as Promise<AttemptPage>,
  replay: (id: string, messageId: string) => call(() => api.POST('/api/v1/webhooks/{id}/messages/{messageId}/replay', { params: { path: { id, messageId } } })),
  replayFailed: (id: string, since: string, until: string) =>
    call(() => api.POST('/api/v1/webhooks/{id}/replay', { ...path(id), body: { since, until } })) as Promise<{ replayed: number }>,
};

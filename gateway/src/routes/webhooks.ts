/**
 * The outgoing webhooks API (issue #38; registered inside `requiring('webhooks.manage', ...)`):
 * endpoints with the collection rules of DESIGN §2, the secret in the answers of create and
 * rotate only, a test delivery, each endpoint's messages and attempts, replays, and the public
 * event catalog. Notification owns all of it and authorizes again on the caller's current rights;
 * the gateway maps shapes only. Responses are no-store (the authenticated context's rule).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { WEBHOOK_EVENT_TYPES, type webhooksV1 } from '@iam/contracts';
import { Envelope, PAGE_DEFAULT, PAGE_SIZE_DEFAULT, envelope, problems } from '../schemas/common';
import {
  AttemptQuery,
  CreateWebhookBody,
  EventTypeDoc,
  MessageQuery,
  PlainPage,
  ReplayBody,
  UpdateWebhookBody,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookMessage,
  WebhookMessageParams,
  WebhookParams,
  WebhookQuery,
} from '../schemas/webhooks';
import { Type } from '@sinclair/typebox';
import type { Upstreams } from '../upstreams';

const PATH = '/api/v1/webhooks';
const EXAMPLE_TIME = '2026-01-15T10:30:00.000Z';

function endpointJson(e: webhooksV1.WebhookEndpoint | undefined) {
  if (!e) throw new Error('notification answered no endpoint');
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes,
    enabled: e.enabled,
    disabledReason: (e.disabledReason || '') as '' | 'gone' | 'failing',
    publicKey: e.publicKey || null,
    pending: e.pending,
    deadLetters: e.dead,
    failingSince: e.failingSince ?? null,
    previousSecretExpiresAt: e.previousSecretExpiresAt ?? null,
    createdAt: e.createdAt!,
    updatedAt: e.updatedAt!,
    deletedAt: e.deletedAt ?? null,
  };
}

const withSecret = (r: webhooksV1.WebhookEndpointWithSecret) => ({ ...endpointJson(r.endpoint), secret: r.secret });

const messageJson = (m: webhooksV1.WebhookMessage) => ({
  id: m.id,
  eventType: m.eventType,
  status: m.status as 'pending' | 'delivered' | 'dead',
  attempts: m.attempts,
  occurredAt: m.occurredAt!,
  nextAttemptAt: m.nextAttemptAt ?? null,
  deliveredAt: m.deliveredAt ?? null,
  lastStatusCode: m.lastStatusCode || null,
  lastError: m.lastError,
  payload: m.payload,
});

const attemptJson = (a: webhooksV1.WebhookAttempt) => ({
  messageId: a.messageId,
  eventType: a.eventType,
  attempt: a.attempt,
  startedAt: a.startedAt!,
  durationMs: a.durationMs,
  statusCode: a.statusCode || null,
  outcome: a.outcome as 'delivered',
  response: a.response,
  error: a.error,
});

/** The plain envelope (offset pages; exact counts). */
const pageOf = <T>(items: T[], p: { page: number; pageSize: number }, totalCount: number) => ({ items, page: p.page, pageSize: p.pageSize, totalCount, totalPages: Math.ceil(totalCount / p.pageSize) });

const EVENT_TYPES = WEBHOOK_EVENT_TYPES.map((t) => ({ type: t.type, version: t.version, description: t.description, schema: t.schema, example: { type: t.type, timestamp: EXAMPLE_TIME, data: t.example } }));

export interface WebhookRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'webhooks'>;
}

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesOptions> = async (app, { upstreams }) => {
  const u = upstreams.webhooks;
  const tags = ['webhooks'];
  const page = Envelope(WebhookEndpoint, { exactFlag: true, cursor: false });

  app.get(
    `${PATH}/event-types`,
    { schema: { tags, summary: 'The public event catalog: each type, its version, the JSON Schema of its data and an example', response: { 200: Type.Object({ items: Type.Array(EventTypeDoc) }, { additionalProperties: false }) } } },
    async () => ({ items: EVENT_TYPES }),
  );

  app.get(
    PATH,
    { schema: { tags, summary: 'List webhook endpoints (paged, searchable), or fetch one with ?id=', querystring: WebhookQuery, response: { 200: { anyOf: [page, WebhookEndpoint] }, ...problems(400, 404, 503) } } },
    async (req, reply) => {
      const q = req.query;
      if (q.id !== undefined) {
        const one = endpointJson(await u.getEndpoint({ id: q.id, includeDeleted: q.includeDeleted === true }));
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(WebhookEndpoint, '200')).send(one);
      }
      const args = { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT, q: q.q ?? '', includeDeleted: q.includeDeleted ?? false };
      const r = await u.listEndpoints(args);
      return envelope(r.items.map(endpointJson), args.page, args.pageSize, r.totalCount, { totalCountExact: true });
    },
  );

  app.get(`${PATH}/:id`, { schema: { tags, summary: 'Get one webhook endpoint', params: WebhookParams, response: { 200: WebhookEndpoint, ...problems(400, 404, 503) } } }, async (req) =>
    endpointJson(await u.getEndpoint({ id: req.params.id, includeDeleted: false })),
  );

  app.post(
    PATH,
    {
      schema: {
        tags,
        summary: 'Register a webhook endpoint; its signing secret (whsec_…) is in this answer only',
        body: CreateWebhookBody,
        response: { 201: WebhookEndpointWithSecret, ...problems(400, 413, 415, 503) },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const created = withSecret(await u.createEndpoint({ url: b.url, description: b.description ?? '', eventTypes: b.eventTypes ?? [], enabled: b.enabled ?? true, ed25519: b.ed25519 ?? false }));
      return reply.code(201).header('location', `${PATH}/${created.id}`).send(created);
    },
  );

  app.put(
    `${PATH}/:id`,
    {
      schema: {
        tags,
        summary: 'Change a webhook endpoint: fields given replace, fields absent stay; enabling it again sends what waited',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookEndpoint, ...problems(400, 404, 413, 415, 503) },
      },
    },
    async (req) => {
      const b = req.body;
      return endpointJson(await u.updateEndpoint({ id: req.params.id, url: b.url, description: b.description, eventTypes: b.eventTypes ? { values: [...b.eventTypes] } : undefined, enabled: b.enabled }));
    },
  );

  app.delete(
    `${PATH}/:id`,
    { schema: { tags, summary: 'Delete a webhook endpoint (soft): nothing more is sent to it', params: WebhookParams, response: { 204: { type: 'null' }, ...problems(400, 404, 503) } } },
    async (req, reply) => {
      await u.deleteEndpoint({ id: req.params.id, includeDeleted: false });
      return reply.code(204).send();
    },
  );

  app.post(
    `${PATH}/:id/secret`,
    {
      schema: {
        tags,
        summary: 'Rotate the signing secret: the new one is in this answer only; the old one signs too for WEBHOOK_SECRET_GRACE_HOURS',
        params: WebhookParams,
        response: { 200: WebhookEndpointWithSecret, ...problems(400, 404, 503) },
      },
    },
    async (req) => withSecret(await u.rotateSecret({ id: req.params.id, includeDeleted: false })),
  );

  app.post(
    `${PATH}/:id/test`,
    {
      schema: {
        tags,
        summary: 'Queue a webhook.test message for this endpoint (out of line: it neither waits for nor holds back the others)',
        params: WebhookParams,
        response: { 202: Type.Object({ messageId: Type.String() }, { additionalProperties: false }), ...problems(400, 404, 503) },
      },
    },
    async (req, reply) => reply.code(202).send({ messageId: (await u.sendTest({ id: req.params.id, includeDeleted: false })).messageId }),
  );

  app.get(
    `${PATH}/:id/messages`,
    {
      schema: {
        tags,
        summary: "The endpoint's messages, newest first (status pending, delivered or dead; time range on the event)",
        params: WebhookParams,
        querystring: MessageQuery,
        response: { 200: PlainPage(WebhookMessage), ...problems(400, 404, 503) },
      },
    },
    async (req) => {
      const q = req.query;
      const args = { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT };
      const r = await u.listMessages({ endpointId: req.params.id, ...args, status: q.status ?? '', since: q.since ? new Date(q.since) : undefined, until: q.until ? new Date(q.until) : undefined });
      return pageOf(r.items.map(messageJson), args, r.totalCount);
    },
  );

  app.get(
    `${PATH}/:id/attempts`,
    {
      schema: {
        tags,
        summary: "The endpoint's attempts, newest first: status, latency, the first bytes of the answer (one message's with messageId)",
        params: WebhookParams,
        querystring: AttemptQuery,
        response: { 200: PlainPage(WebhookAttempt), ...problems(400, 404, 503) },
      },
    },
    async (req) => {
      const q = req.query;
      const args = { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT };
      const r = await u.listAttempts({ endpointId: req.params.id, messageId: q.messageId ?? '', ...args });
      return pageOf(r.items.map(attemptJson), args, r.totalCount);
    },
  );

  app.post(
    `${PATH}/:id/messages/:messageId/replay`,
    {
      schema: {
        tags,
        summary: 'Send one message again: the same webhook-id and body, a new timestamp and signature, a new schedule',
        params: WebhookMessageParams,
        response: { 202: WebhookMessage, ...problems(400, 404, 503) },
      },
    },
    async (req, reply) => reply.code(202).send(messageJson(await u.replayMessage({ endpointId: req.params.id, messageId: req.params.messageId }))),
  );

  app.post(
    `${PATH}/:id/replay`,
    {
      schema: {
        tags,
        summary: 'Send again every dead letter whose event occurred in [since, until)',
        params: WebhookParams,
        body: ReplayBody,
        response: { 202: Type.Object({ replayed: Type.Integer() }, { additionalProperties: false }), ...problems(400, 404, 413, 415, 503) },
      },
    },
    async (req, reply) => reply.code(202).send({ replayed: (await u.replayFailed({ endpointId: req.params.id, since: new Date(req.body.since), until: new Date(req.body.until) })).replayed }),
  );
};

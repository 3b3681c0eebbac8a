/**
 * The four Full-profile collections share one shape (DESIGN §2): GET with paging, search and
 * `?id=`, POST → 201 + Location, PUT /{id} → 200, DELETE /{id} → 204, each behind its policy.
 * One factory registers them; each collection supplies its schemas and its upstream calls.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../auth/authenticator';
import { authenticate, requirePermission } from '../../plugins/app/auth';
import { CollectionQuery, Envelope, IdParams, envelope, problems } from '../../schemas/common';

export interface ListArgs {
  page: number;
  pageSize: number;
  q: string;
  includeDeleted: boolean;
}

export interface CollectionSpec<R> {
  /** e.g. /api/v1/users */
  readonly path: string;
  /** OpenAPI tag. */
  readonly tag: string;
  readonly permission: string;
  readonly resource: TSchema;
  readonly createBody: TSchema;
  readonly updateBody: TSchema;
  readonly get: (id: string) => Promise<R>;
  readonly list: (args: ListArgs) => Promise<{ items: readonly R[]; totalCount: number }>;
  /** Writes name the caller (the token's `sub`): the directory authorizes against its rights. */
  readonly create: (body: never, actor: string) => Promise<R & { id: string }>;
  readonly update: (id: string, body: never, actor: string) => Promise<R>;
  readonly remove: (id: string, actor: string) => Promise<void>;
}

export function registerCollection<R>(app: FastifyInstance, auth: Authenticator, spec: CollectionSpec<R>): void {
  const guard = [authenticate(auth), requirePermission(spec.permission)];
  const security = [{ bearer: [] }];
  const common = problems(400, 401, 403);

  app.get(
    spec.path,
    {
      onRequest: guard,
      schema: {
        tags: [spec.tag],
        summary: `List ${spec.tag} (paged, searchable), or fetch one with ?id=`,
        security,
        querystring: CollectionQuery,
        response: { 200: { anyOf: [Envelope(spec.resource), spec.resource] }, ...common, ...problems(404) },
      },
    },
    async (req) => {
      const q = req.query as { page: number; pageSize: number; q?: string; includeDeleted: boolean; id?: string };
      if (q.id !== undefined) return spec.get(q.id);
      const page = await spec.list({ page: q.page, pageSize: q.pageSize, q: q.q ?? '', includeDeleted: q.includeDeleted });
      return envelope(page.items, q.page, q.pageSize, page.totalCount);
    },
  );

  app.post(
    spec.path,
    {
      onRequest: guard,
      schema: { tags: [spec.tag], summary: `Create one of ${spec.tag}`, security, body: spec.createBody, response: { 201: spec.resource, ...common, ...problems(409, 413, 415) } },
    },
    async (req, reply) => {
      const created = await spec.create(req.body as never, req.principal!.sub);
      return reply.code(201).header('location', `${spec.path}?id=${created.id}`).send(created);
    },
  );

  app.put(
    `${spec.path}/:id`,
    {
      onRequest: guard,
      schema: {
        tags: [spec.tag],
        summary: `Update one of ${spec.tag}: fields given replace, fields absent stay`,
        security,
        params: IdParams,
        body: spec.updateBody,
        response: { 200: spec.resource, ...common, ...problems(404, 409, 413, 415) },
      },
    },
    async (req) => spec.update((req.params as { id: string }).id, req.body as never, req.principal!.sub),
  );

  app.delete(
    `${spec.path}/:id`,
    {
      onRequest: guard,
      schema: { tags: [spec.tag], summary: `Delete one of ${spec.tag}`, security, params: IdParams, response: { 204: { type: 'null' }, ...common, ...problems(404) } },
    },
    async (req, reply) => {
      await spec.remove((req.params as { id: string }).id, req.principal!.sub);
      return reply.code(204).send();
    },
  );
}

/**
 * The Compact profile (spec §4.1): login at /api/v1/generate-jwt, and /api/v1/user and
 * /api/v1/role with `page` / `page_size` and `/{id}` routes. Routes and schemas only: the
 * login, the calls and the policies are the Full profile's, shared.
 */
import type { TSchema } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Authenticator } from '../../auth/authenticator';
import { authenticate, requirePermission } from '../../plugins/app/auth';
import { LoginBody, LoginResponse } from '../../schemas/auth';
import { Envelope, IdParams, Page, PageSize, envelope, problems } from '../../schemas/common';
import * as S from '../../schemas/resources';
import type { Upstreams } from '../../upstreams';
import { login } from '../full/auth';
import type { CollectionSpec } from '../full/collections';
import { roleCalls, userCalls } from '../full';

export interface CompactDeps {
  readonly upstreams: Upstreams;
  readonly authenticator: Authenticator;
  readonly limits: { readonly login: onRequestAsyncHookHandler };
}

const CompactQuery = Type.Object({
  page: Page,
  page_size: PageSize,
});

type CompactSpec<R> = Omit<CollectionSpec<R>, 'list'> & {
  readonly list: (a: { page: number; pageSize: number; q: string; includeDeleted: boolean }) => Promise<{ items: readonly R[]; totalCount: number }>;
};

function compactCollection<R>(app: FastifyInstance, auth: Authenticator, spec: CompactSpec<R> & { resource: TSchema }): void {
  const guard = [authenticate(auth), requirePermission(spec.permission)];
  const security = [{ bearer: [] }];
  const byId = `${spec.path}/:id`;

  app.get(
    spec.path,
    { onRequest: guard, schema: { tags: [spec.tag], summary: `List ${spec.tag}`, security, querystring: CompactQuery, response: { 200: Envelope(spec.resource), ...problems(400, 401, 403) } } },
    async (req) => {
      const q = req.query as { page: number; page_size: number };
      const page = await spec.list({ page: q.page, pageSize: q.page_size, q: '', includeDeleted: false });
      return envelope(page.items, q.page, q.page_size, page.totalCount);
    },
  );
  app.post(
    spec.path,
    { onRequest: guard, schema: { tags: [spec.tag], summary: `Create one of ${spec.tag}`, security, body: spec.createBody, response: { 201: spec.resource, ...problems(400, 401, 403, 409) } } },
    async (req, reply) => {
      const created = await spec.create(req.body as never, req.principal!.sub);
      return reply.code(201).header('location', `${spec.path}/${created.id}`).send(created);
    },
  );
  app.get(
    byId,
    { onRequest: guard, schema: { tags: [spec.tag], summary: `Get one of ${spec.tag}`, security, params: IdParams, response: { 200: spec.resource, ...problems(400, 401, 403, 404) } } },
    async (req) => spec.get((req.params as { id: string }).id),
  );
  app.put(
    byId,
    {
      onRequest: guard,
      schema: { tags: [spec.tag], summary: `Update one of ${spec.tag}`, security, params: IdParams, body: spec.updateBody, response: { 200: spec.resource, ...problems(400, 401, 403, 404, 409) } },
    },
    async (req) => spec.update((req.params as { id: string }).id, req.body as never, req.principal!.sub),
  );
  app.delete(
    byId,
    { onRequest: guard, schema: { tags: [spec.tag], summary: `Delete one of ${spec.tag}`, security, params: IdParams, response: { 204: { type: 'null' }, ...problems(400, 401, 403, 404) } } },
    async (req, reply) => {
      await spec.remove((req.params as { id: string }).id, req.principal!.sub);
      return reply.code(204).send();
    },
  );
}

export async function compactProfile(app: FastifyInstance, deps: CompactDeps): Promise<void> {
  app.post(
    '/api/v1/generate-jwt',
    {
      onRequest: deps.limits.login,
      schema: { tags: ['auth'], summary: 'Exchange email and password for a token', body: LoginBody, response: { 200: LoginResponse, ...problems(400, 401) } },
    },
    async (req) => login(deps.upstreams, req.body as { email: string; password: string }),
  );
  compactCollection(app, deps.authenticator, {
    path: '/api/v1/user',
    tag: 'user',
    permission: 'users.manage',
    resource: S.User,
    createBody: S.CreateUserBody,
    updateBody: S.UpdateUserBody,
    ...userCalls(deps.upstreams),
  });
  compactCollection(app, deps.authenticator, {
    path: '/api/v1/role',
    tag: 'role',
    permission: 'roles.manage',
    resource: S.Role,
    createBody: S.CreateNamedBody,
    updateBody: S.UpdateNamedBody,
    ...roleCalls(deps.upstreams),
  });
}

/**
 * One collection module for both profiles (DESIGN §2): GET (paged list, or one resource), POST →
 * 201 + Location, PUT /{id} → 200, DELETE /{id} → 204. A dialect says how a profile spells them:
 * Full uses plural paths, `pageSize`, `q`, `includeDeleted` and `?id=`; Compact singular paths,
 * `page_size` and `/{id}`. Registered inside a `requiring(permission)` context (./index.ts).
 */
import { type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CollectionQuery, Envelope, IdParams, Page, PageSize, envelope, problems } from '../../schemas/common';

export interface ListArgs {
  page: number;
  pageSize: number;
  q: string;
  includeDeleted: boolean;
  /** The collection's own filters (CollectionSpec.listFilters) given in the query. */
  filters: Record<string, string>;
}

/** What a collection is: its permission, schemas and upstream calls (./resources.ts). */
export interface CollectionSpec<R> {
  readonly tag: string;
  readonly permission: string;
  readonly resource: TSchema;
  readonly createBody: TSchema;
  readonly updateBody: TSchema;
  /** Extra list filters (exact-match query parameters) in the dialects that search (Full). */
  readonly listFilters?: TProperties;
  readonly get: (id: string) => Promise<R>;
  /** `totalCountExact` false: `totalCount` is an estimate (beyond the directory's count bound). */
  readonly list: (args: ListArgs) => Promise<{ items: readonly R[]; totalCount: number; totalCountExact?: boolean }>;
  /** Writes name the caller (the token's `sub`): the directory authorizes against its rights. */
  readonly create: (body: never, actor: string) => Promise<R & { id: string }>;
  readonly update: (id: string, body: never, actor: string) => Promise<R>;
  readonly remove: (id: string, actor: string) => Promise<void>;
}

export interface Dialect {
  readonly path: string;
  readonly query: TObject;
  /** Whether a collection's listFilters are offered (Full: yes; Compact has no search). */
  readonly filters: boolean;
  /** The list arguments a validated query stands for. */
  readonly listArgs: (query: Record<string, unknown>) => ListArgs;
  /** Full: `GET path?id=` answers one resource; Compact: `GET path/{id}`. */
  readonly singleByQuery: boolean;
  readonly location: (id: string) => string;
}

export function fullDialect(path: string): Dialect {
  return {
    path,
    query: CollectionQuery,
    filters: true,
    listArgs: (q) => ({
      page: q.page as number,
      pageSize: q.pageSize as number,
      q: (q.q as string | undefined) ?? '',
      includeDeleted: q.includeDeleted as boolean,
      filters: {},
    }),
    singleByQuery: true,
    location: (id) => `${path}?id=${id}`,
  };
}

const CompactQuery = Type.Object({ page: Type.Optional(Page), page_size: Type.Optional(PageSize) });

export function compactDialect(path: string): Dialect {
  return {
    path,
    query: CompactQuery,
    filters: false,
    listArgs: (q) => ({ page: q.page as number, pageSize: q.page_size as number, q: '', includeDeleted: false, filters: {} }),
    singleByQuery: false,
    location: (id) => `${path}/${id}`,
  };
}

export function collectionRoutes<R>(spec: CollectionSpec<R>, d: Dialect) {
  return (app: FastifyInstance): void => {
    const tags = [spec.tag];
    const byId = `${d.path}/:id`;
    // The Full profile's envelope says whether totalCount is exact (additive); Compact's stays as it was.
    const full = d.singleByQuery;
    const list = Envelope(spec.resource, { exactFlag: full });
    const filterNames = d.filters ? Object.keys(spec.listFilters ?? {}) : [];
    const querystring = filterNames.length ? Type.Object({ ...d.query.properties, ...spec.listFilters }) : d.query;

    app.get(
      d.path,
      {
        schema: {
          tags,
          summary: d.singleByQuery ? `List ${spec.tag} (paged, searchable), or fetch one with ?id=` : `List ${spec.tag}`,
          querystring,
          response: { 200: d.singleByQuery ? { anyOf: [list, spec.resource] } : list, ...problems(400, ...(d.singleByQuery ? [404] : [])) },
        },
      },
      async (req, reply) => {
        const q = req.query as Record<string, unknown>;
        if (d.singleByQuery && typeof q.id === 'string') {
          const one = await spec.get(q.id);
          // The documented 200 is `anyOf [envelope, resource]`, which fast-json-stringify serializes
          // by validating the payload against the branches first (ajv, per response); here the
          // branch is known, so the resource's own serializer (compiled once per route) writes it.
          return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(spec.resource, '200')).send(one);
        }
        const args = d.listArgs(q);
        for (const name of filterNames) if (typeof q[name] === 'string') args.filters[name] = q[name];
        const page = await spec.list(args);
        return envelope(page.items, args.page, args.pageSize, page.totalCount, full ? (page.totalCountExact ?? true) : undefined);
      },
    );

    if (!d.singleByQuery) {
      app.get(
        byId,
        { schema: { tags, summary: `Get one of ${spec.tag}`, params: IdParams, response: { 200: spec.resource, ...problems(400, 404) } } },
        async (req) => spec.get((req.params as { id: string }).id),
      );
    }

    app.post(
      d.path,
      { schema: { tags, summary: `Create one of ${spec.tag}`, body: spec.createBody, response: { 201: spec.resource, ...problems(400, 409, 413, 415) } } },
      async (req, reply) => {
        const created = await spec.create(req.body as never, req.principal!.sub);
        return reply.code(201).header('location', d.location(created.id)).send(created);
      },
    );

    app.put(
      byId,
      {
        schema: {
          tags,
          summary: `Update one of ${spec.tag}: fields given replace, fields absent stay, null clears an optional one`,
          params: IdParams,
          body: spec.updateBody,
          response: { 200: spec.resource, ...problems(400, 404, 409, 413, 415) },
        },
      },
      async (req) => spec.update((req.params as { id: string }).id, req.body as never, req.principal!.sub),
    );

    app.delete(
      byId,
      { schema: { tags, summary: `Delete one of ${spec.tag}`, params: IdParams, response: { 204: { type: 'null' }, ...problems(400, 404) } } },
      async (req, reply) => {
        await spec.remove((req.params as { id: string }).id, req.principal!.sub);
        return reply.code(204).send();
      },
    );
  };
}

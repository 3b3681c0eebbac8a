/**
 * One collection module for both profiles (DESIGN §2): GET (paged list, or one resource), POST →
 * 201 + Location, PUT /{id} → 200, DELETE /{id} → 204. A dialect says how a profile spells them:
 * Full uses plural paths, `pageSize`, `q`, `includeDeleted` and `?id=`; Compact singular paths,
 * `page_size` and `/{id}`. Registered inside a `requiring(permission)` context (../index.ts).
 * Request data is typed from the schemas that validate it: a spec's bodies from its own body
 * schemas, the list query from its dialect's.
 */
import type { FastifyPluginOptions } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { AppError } from '@iam/platform/core';
import { CollectionQuery, Envelope, IdParams, PAGE_DEFAULT, PAGE_SIZE_DEFAULT, Page, PageSize, SortParam, envelope, problems } from '../../schemas/common';

export interface ListArgs {
  page: number;
  pageSize: number;
  q: string;
  includeDeleted: boolean;
  /** The collection's own filters (CollectionSpec.listFilters) given in the query. */
  filters: Record<string, string>;
  /** A keyset page (Full): nextCursor of an earlier page; '' = none. */
  cursor: string;
  /** One of CollectionSpec.sorts, '-' first for descending; '' = the default. */
  sort: string;
}

/**
 * What a collection is: its permission, schemas and upstream calls (./resources.ts). A write's
 * body has the type of the schema that validated it (`C`, `U`).
 */
export interface CollectionSpec<R, C extends TSchema = TSchema, U extends TSchema = TSchema> {
  readonly tag: string;
  readonly permission: string;
  readonly resource: TSchema;
  readonly createBody: C;
  readonly updateBody: U;
  /** Extra list filters (exact-match query parameters) in the dialects that search (Full). */
  readonly listFilters?: TProperties;
  /** Sort keys of the Full profile's `sort` (the first is the default); absent: no `sort` parameter. */
  readonly sorts?: readonly string[];
  /** One resource; `includeDeleted` (Full's `?id=&includeDeleted=true`) answers a soft-deleted one too, where the collection keeps them readable (users). */
  readonly get: (id: string, opts?: { includeDeleted?: boolean }) => Promise<R>;
  /** `totalCountExact` false: `totalCount` is an estimate (beyond the directory's count bound). */
  readonly list: (args: ListArgs) => Promise<{ items: readonly R[]; totalCount: number; totalCountExact?: boolean; nextCursor?: string | null; page?: number }>;
  /** The writes act for the request's verified user (its request context names them in the call's assertion): the directory authorizes against their rights. */
  readonly create: (body: Static<C>) => Promise<R & { id: string }>;
  readonly update: (id: string, body: Static<U>) => Promise<R>;
  readonly remove: (id: string) => Promise<void>;
}

export interface Dialect<Q extends TObject = TObject> {
  readonly path: string;
  readonly query: Q;
  /** Whether a collection's listFilters are offered (Full: yes; Compact has no search). */
  readonly filters: boolean;
  /** The list arguments a validated query stands for (the collection's filters aside). */
  readonly listArgs: (query: Static<Q>) => ListArgs;
  /** Full: `GET path?id=` answers one resource (the id it names, if any); Compact: `GET path/{id}`. */
  readonly singleByQuery?: (query: Static<Q>) => string | undefined;
  readonly location: (id: string) => string;
}

export function fullDialect(path: string): Dialect<typeof CollectionQuery> {
  return {
    path,
    query: CollectionQuery,
    filters: true,
    listArgs: (q) => ({
      page: q.page ?? PAGE_DEFAULT,
      pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT,
      q: q.q ?? '',
      includeDeleted: q.includeDeleted ?? false,
      filters: {},
      cursor: q.cursor ?? '',
      sort: '',
    }),
    singleByQuery: (q) => q.id,
    location: (id) => `${path}?id=${id}`,
  };
}

const CompactQuery = Type.Object({ page: Type.Optional(Page), page_size: Type.Optional(PageSize) }, { additionalProperties: false });

export function compactDialect(path: string): Dialect<typeof CompactQuery> {
  return {
    path,
    query: CompactQuery,
    filters: false,
    listArgs: (q) => ({ page: q.page ?? PAGE_DEFAULT, pageSize: q.page_size ?? PAGE_SIZE_DEFAULT, q: '', includeDeleted: false, filters: {}, cursor: '', sort: '' }),
    location: (id) => `${path}/${id}`,
  };
}

/** The filters among a validated query's parameters. */
function filtersOf(query: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = query[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/** Whether a validated query holds the parameter. */
function given(query: Readonly<Record<string, unknown>>, name: string): boolean {
  return query[name] !== undefined;
}

export interface CollectionOptions<R, C extends TSchema, U extends TSchema, Q extends TObject> extends FastifyPluginOptions {
  readonly spec: CollectionSpec<R, C, U>;
  readonly dialect: Dialect<Q>;
}

/** A FastifyPluginAsyncTypebox<CollectionOptions>, generic so that a spec's body types reach its handlers. */
export async function collectionRoutes<R, C extends TSchema, U extends TSchema, Q extends TObject>(
  app: Parameters<FastifyPluginAsyncTypebox>[0],
  { spec, dialect: d }: CollectionOptions<R, C, U, Q>,
): Promise<void> {
  const tags = [spec.tag];
  const byId = `${d.path}/:id`;
  // The Full profile's envelope says whether totalCount is exact (additive); Compact's stays as it was.
  const full = d.singleByQuery !== undefined;
  const list = Envelope(spec.resource, { exactFlag: full });
  const filterNames = d.filters ? Object.keys(spec.listFilters ?? {}) : [];
  const sortable = d.filters && spec.sorts !== undefined && spec.sorts.length > 0;
  // Unknown parameters are refused (DESIGN §4), naming the other profile's spelling when it is one (errors.ts).
  const extra: TProperties = { ...(d.filters ? spec.listFilters : {}), ...(sortable ? { sort: Type.Optional(SortParam(spec.sorts ?? [])) } : {}) };
  const querystring = Object.keys(extra).length ? Type.Object({ ...d.query.properties, ...extra }, { additionalProperties: false }) : d.query;

  app.get(
    d.path,
    {
      schema: {
        tags,
        summary: full ? `List ${spec.tag} (paged, searchable), or fetch one with ?id=` : `List ${spec.tag}`,
        querystring,
        response: { 200: full ? { anyOf: [list, spec.resource] } : list, ...problems(400, ...(full ? [404] : [])) },
      },
    },
    async (req, reply) => {
      const id = d.singleByQuery?.(req.query);
      if (id !== undefined) {
        const one = await spec.get(id, { includeDeleted: d.listArgs(req.query).includeDeleted });
        // The documented 200 is `anyOf [envelope, resource]`, which fast-json-stringify serializes
        // by validating the payload against the branches first (ajv, per response); here the
        // branch is known, so the resource's own serializer (compiled once per route) writes it.
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(spec.resource, '200')).send(one);
      }
      const args = { ...d.listArgs(req.query), filters: filtersOf(req.query, filterNames), sort: sortable ? (filtersOf(req.query, ['sort']).sort ?? '') : '' };
      if (args.cursor !== '' && given(req.query, 'page')) {
        throw AppError.validation('A cursor names its own page.', [{ field: 'query.cursor', message: 'cannot be combined with page: send one or the other' }]);
      }
      const page = await spec.list(args);
      return envelope(
        page.items,
        page.page ?? args.page,
        args.pageSize,
        page.totalCount,
        full ? { totalCountExact: page.totalCountExact ?? true, nextCursor: page.nextCursor ?? null } : undefined,
      );
    },
  );

  if (!full) {
    app.get(
      byId,
      { schema: { tags, summary: `Get one of ${spec.tag}`, params: IdParams, response: { 200: spec.resource, ...problems(400, 404) } } },
      async (req) => spec.get(req.params.id),
    );
  }

  app.post(
    d.path,
    { schema: { tags, summary: `Create one of ${spec.tag}`, body: spec.createBody, response: { 201: spec.resource, ...problems(400, 409, 413, 415) } } },
    async (req, reply) => {
      const created = await spec.create(req.body);
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
    async (req) => spec.update(req.params.id, req.body),
  );

  app.delete(
    byId,
    { schema: { tags, summary: `Delete one of ${spec.tag}`, params: IdParams, response: { 204: { type: 'null' }, ...problems(400, 404) } } },
    async (req, reply) => {
      await spec.remove(req.params.id);
      return reply.code(204).send();
    },
  );
}

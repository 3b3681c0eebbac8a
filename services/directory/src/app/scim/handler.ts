/**
 * The SCIM server of one organization (issue #42): authenticates the connection's bearer token,
 * routes the request (Users, Groups, Bulk, the discovery endpoints, `.search`), and answers every
 * refusal with the SCIM error schema (`status`, `scimType`, `detail`). Writes run with the
 * connection as the request's actor (`scim:<connectionId>`), so their events and the audit trail
 * name it.
 */
import { AppError, isUuid, requestContext, withRequestContext } from '@iam/platform';
import { ScimError } from '../../domain/scim-error';
import type { ScimConnectionUseCases } from '../scim-connections';
import { runBulk } from './bulk';
import { BULK_MAX_PAYLOAD_BYTES, resourceTypes, schemas, serviceProviderConfig } from './discovery';
import { createScimGroups } from './groups';
import { type ListParams, listResponse, searchParams } from './query';
import { checkDocument, checkQuery } from './input';
import { type Json, SCHEMA } from './resources';
import { rootSearch } from './root-search';
import type { ScimDeps, ScimResult, ScimScope } from './scope';
import { createScimUsers } from './users';

export interface ScimRequest {
  readonly organizationId: string;
  readonly token: string;
  readonly method: string;
  /** After /scim/v2/{organizationId}. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: string;
  readonly ifMatch?: string;
  readonly baseUrl: string;
}

export interface ScimServer {
  handle(req: ScimRequest): Promise<ScimResult>;
}

/** The SCIM error document of any refusal; an unexpected error is rethrown (a bug, not an answer). */
export function scimErrorOf(err: unknown): { status: number; body: Json } {
  const doc = (status: number, detail: string, scimType?: string) => ({ status, body: { schemas: [SCHEMA.error], status: String(status), ...(scimType ? { scimType } : {}), detail } });
  if (err instanceof ScimError) return doc(err.status, err.detail, err.scimType);
  if (err instanceof AppError) {
    const fields = (err.errors ?? []).map((e) => `${e.field}: ${e.message}`).join('; ');
    const detail = fields ? `${err.message} (${fields})` : err.message;
    switch (err.code) {
      case 'VALIDATION':
        return doc(400, detail, 'invalidValue');
      case 'CONFLICT':
        return doc(409, detail, 'uniqueness');
      case 'NOT_FOUND':
        return doc(404, detail);
      case 'FORBIDDEN':
        return doc(403, detail);
      default:
        break;
    }
  }
  throw err;
}


export function createScimServer(deps: ScimDeps & { connections: ScimConnectionUseCases }): ScimServer {
  const users = createScimUsers(deps);
  const groups = createScimGroups(deps);
  const kinds = { Users: users, Groups: groups } as const;

  /** One resource operation (also Bulk's). */
  const resource = async (scope: ScimScope, method: string, path: string, body: unknown, ifMatch: string | undefined, query: ListParams = {}): Promise<ScimResult> => {
    const [, kind, id, extra] = path.split('/') as [string, string, string | undefined, string | undefined];
    const r = kind === 'Users' || kind === 'Groups' ? kinds[kind] : undefined;
    if (!r || extra !== undefined) throw ScimError.notFound('No such endpoint.');
    if (id === undefined || id === '') {
      if (method === 'GET') return r.list(scope, query);
      if (method === 'POST') return r.create(scope, body);
    } else if (id === '.search') {
      if (method === 'POST') return r.list(scope, searchParams(body));
    } else {
      if (method === 'GET') return r.get(scope, id, query);
      if (method === 'PUT') return r.replace(scope, id, body, ifMatch);
      if (method === 'PATCH') return r.patch(scope, id, body, ifMatch);
      if (method === 'DELETE') return r.remove(scope, id, ifMatch);
    }
    throw new ScimError(405, `${method} is not supported here.`);
  };

  const route = async (scope: ScimScope, req: ScimRequest, body: unknown): Promise<ScimResult> => {
    const path = req.path.replace(/\/+$/, '') || '/';
    const method = req.method.toUpperCase();
    const get = (doc: () => Json): ScimResult => {
      if (method !== 'GET') throw new ScimError(405, `${method} is not supported here.`);
      return { status: 200, body: doc() };
    };
    const one = (all: Json[], id: string): Json => {
      const found = all.find((x) => x.id === id);
      if (!found) throw ScimError.notFound();
      return found;
    };
    if (path === '/ServiceProviderConfig') return get(() => serviceProviderConfig(scope.base));
    if (path === '/ResourceTypes') return get(() => listResponse(resourceTypes(scope.base), 2, 1));
    if (path.startsWith('/ResourceTypes/')) return get(() => one(resourceTypes(scope.base), decodeURIComponent(path.slice(15))));
    if (path === '/Schemas') return get(() => listResponse(schemas(scope.base), 4, 1));
    if (path.startsWith('/Schemas/')) return get(() => one(schemas(scope.base), decodeURIComponent(path.slice(9))));
    if (path === '/Bulk') {
      if (method !== 'POST') throw new ScimError(405, 'Bulk takes POST.');
      return runBulk(scope, body, (s, m, p, b, v) => resource(s, m, p, b, v), scimErrorOf);
    }
    if (path === '/.search') {
      if (method !== 'POST') throw new ScimError(405, '.search takes POST.');
      return rootSearch(scope, searchParams(body), users, groups);
    }
    return resource(scope, method, path, body, req.ifMatch, req.query);
  };

  return {
    async handle(req) {
      try {
        if (!req.token) throw new ScimError(401, 'A SCIM connection’s bearer token is required.');
        const connection = await deps.connections.authenticate(req.token);
        if (!connection) throw new ScimError(401, 'The bearer token is not a live SCIM connection’s.');
        // Another organization's id, with a live token of this one: as if it did not exist.
        if (!isUuid(req.organizationId) || connection.organizationId !== req.organizationId.toLowerCase()) throw ScimError.notFound('The organization does not exist.');
        const organization = await deps.stores.organizations.findById(connection.organizationId);
        if (!organization) throw ScimError.notFound('The organization does not exist.');
        if (Buffer.byteLength(req.body) > BULK_MAX_PAYLOAD_BYTES) throw new ScimError(413, `A request body is at most ${BULK_MAX_PAYLOAD_BYTES} bytes (maxPayloadSize).`);
        let body: unknown;
        if (req.body.trim() !== '') {
          try {
            body = JSON.parse(req.body);
          } catch {
            throw ScimError.badRequest('invalidSyntax', 'The body is not JSON.');
          }
          checkDocument(body);
        }
        checkQuery(req.query);
        const scope: ScimScope = { organization, connection, base: req.baseUrl };
        return await withRequestContext({ ...requestContext(), actor: `scim:${connection.id}` }, () => route(scope, req, body));
      } catch (err) {
        return scimErrorOf(err);
      }
    },
  };
}

/**
 * SCIM Bulk (RFC 7644 §3.7): operations in order, each in its own transaction, `bulkId:<id>`
 * references (in a path or anywhere in data) replaced by the id an earlier POST of the request
 * created, `failOnErrors` stopping the run after that many errors. `maxOperations` is enforced
 * here (413) and `maxPayloadSize` for every request by the handler.
 */
import { ScimError } from '../../domain/scim-error';
import { BULK_MAX_OPERATIONS } from './discovery';
import { type Json, SCHEMA, field, isObject } from './resources';
import type { ScimResult, ScimScope } from './scope';

/** One operation as the handler dispatches it. */
export type Dispatch = (scope: ScimScope, method: string, path: string, body: unknown, ifMatch: string | undefined) => Promise<ScimResult>;

export type ErrorBody = (err: unknown) => { status: number; body: Json };

const BULK_ID = /bulkId:([A-Za-z0-9._~-]{1,100})/g;

function resolve(text: string, ids: Map<string, string>): string {
  return text.replace(BULK_ID, (whole, id: string) => {
    const found = ids.get(id);
    if (!found) throw ScimError.badRequest('invalidValue', `bulkId ${id} names no resource created earlier in this request.`);
    return found;
  });
}

export async function runBulk(scope: ScimScope, body: unknown, dispatch: Dispatch, errorBody: ErrorBody): Promise<ScimResult> {
  if (!isObject(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a BulkRequest.');
  const schemas = field(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.includes(SCHEMA.bulkRequest)) throw ScimError.badRequest('invalidSyntax', `A Bulk body names the schema ${SCHEMA.bulkRequest}.`);
  const ops = field(body, 'Operations');
  if (!Array.isArray(ops)) throw ScimError.badRequest('invalidSyntax', 'Operations must be an array.');
  if (ops.length > BULK_MAX_OPERATIONS) throw new ScimError(413, `A Bulk request has at most ${BULK_MAX_OPERATIONS} operations (maxOperations).`);
  const failOn = field(body, 'failOnErrors');
  const limit = typeof failOn === 'number' && Number.isInteger(failOn) && failOn > 0 ? failOn : Infinity;
  const ids = new Map<string, string>();
  const results: Json[] = [];
  let errors = 0;
  for (const raw of ops) {
    const op = isObject(raw) ? raw : {};
    const text = (name: string): string | undefined => {
      const v = field(op, name);
      return typeof v === 'string' ? v : undefined;
    };
    const method = (text('method') ?? '').toUpperCase();
    const bulkId = text('bulkId');
    const version = text('version');
    try {
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) throw ScimError.badRequest('invalidSyntax', 'method is POST, PUT, PATCH or DELETE.');
      if (method === 'POST' && !bulkId) throw ScimError.badRequest('invalidSyntax', 'A POST operation needs a bulkId.');
      const path = resolve(text('path') ?? '', ids);
      if (!/^\/(Users|Groups)(\/[^/]+)?$/.test(path) || (method === 'POST') === /^\/(Users|Groups)\/[^/]+$/.test(path)) throw ScimError.badRequest('invalidPath', 'path is /Users or /Groups for POST, /Users/{id} or /Groups/{id} otherwise.');
      const data = field(op, 'data');
      const resolved = data === undefined ? undefined : (JSON.parse(resolve(JSON.stringify(data), ids)) as unknown);
      const r = await dispatch(scope, method, path, resolved, version);
      if (method === 'POST' && bulkId && r.body) ids.set(bulkId, String(r.body.id));
      results.push({ method, ...(bulkId ? { bulkId } : {}), ...(r.location ? { location: r.location } : {}), ...(r.etag ? { version: r.etag } : {}), status: String(r.status) });
    } catch (err) {
      const e = errorBody(err);
      errors++;
      results.push({ method, ...(bulkId ? { bulkId } : {}), status: String(e.status), response: e.body });
      if (errors >= limit) break;
    }
  }
  return { status: 200, body: { schemas: [SCHEMA.bulkResponse], Operations: results } };
}

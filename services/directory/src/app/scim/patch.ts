/**
 * SCIM PATCH (RFC 7644 §3.5.2) through `scim-patch`: the operations are checked here (a
 * PatchOp message, at most MAX_PATCH_OPERATIONS, `op` matched case-insensitively: Entra sends
 * `Replace`) and applied by the library to the resource's current representation; the result
 * is then read as a whole document (PUT's path), so a PATCH can set nothing PUT could not.
 */
import { type ScimPatchOperation, ScimError as PatchError, scimPatch } from 'scim-patch';
import { ScimError, type ScimType } from '../../domain/scim-error';
import { FILTER_MAX_LENGTH, parseFilter } from '../../infra/scim-filter';
import { type Json, SCHEMA, field, isObject } from './resources';

export const MAX_PATCH_OPERATIONS = 1_000;

const SCIM_TYPES = new Set<string>(['invalidFilter', 'tooMany', 'uniqueness', 'mutability', 'invalidSyntax', 'invalidPath', 'noTarget', 'invalidValue', 'invalidVers', 'sensitive']);

function boundedPath(path: string): void {
  try {
    if (path.includes('[')) parseFilter(path.slice(path.indexOf('[') + 1, path.lastIndexOf(']')));
    else if (path.length > FILTER_MAX_LENGTH) throw new Error('long');
  } catch {
    throw ScimError.badRequest('invalidPath', 'The path is not a valid SCIM attribute path.');
  }
}

/** The PatchOp's operations, `op` lower-cased; a 400 `invalidSyntax` for anything else. */
export function patchOperations(body: unknown): ScimPatchOperation[] {
  if (!isObject(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a PatchOp message.');
  const schemas = field(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.includes(SCHEMA.patch)) throw ScimError.badRequest('invalidSyntax', `A PATCH body names the schema ${SCHEMA.patch}.`);
  const ops = field(body, 'Operations');
  if (!Array.isArray(ops) || ops.length === 0) throw ScimError.badRequest('invalidSyntax', 'Operations must be a non-empty array.');
  if (ops.length > MAX_PATCH_OPERATIONS) throw ScimError.badRequest('tooMany', `A PATCH has at most ${MAX_PATCH_OPERATIONS} operations.`);
  return ops.flatMap((o: unknown) => {
    if (!isObject(o)) throw ScimError.badRequest('invalidSyntax', 'Each operation is an object.');
    const op = field(o, 'op');
    if (typeof op !== 'string' || !['add', 'replace', 'remove'].includes(op.toLowerCase())) throw ScimError.badRequest('invalidSyntax', 'op is add, replace or remove.');
    const path = field(o, 'path');
    if (path !== undefined && typeof path !== 'string') throw ScimError.badRequest('invalidPath', 'path must be a string.');
    // scim-patch parses a path's filter with scim2-parse-filter: the same bounds as a filter's.
    if (typeof path === 'string') boundedPath(path);
    const value = field(o, 'value');
    const lower = op.toLowerCase() as 'add' | 'replace' | 'remove';
    if (lower === 'remove' && typeof path === 'string' && !path.includes('[') && Array.isArray(value) && value.length > 0 && value.every((v) => isObject(v) && typeof field(v, 'value') === 'string')) {
      // Entra removes members by value objects (`{"$ref": null, "value": id}`): one filtered removal each, matched by `value` alone.
      return value.map((v: Json): ScimPatchOperation => ({ op: 'remove', path: `${path}[value eq ${JSON.stringify(field(v, 'value'))}]` }));
    }
    return [lower === 'remove' ? { op: lower, path: path ?? '', ...(value !== undefined ? { value } : {}) } : { op: lower, ...(path ? { path } : {}), value }];
  });
}

/** The resource with the PATCH applied (not the stored one: the caller writes it). */
export function applyPatch(resource: Json, body: unknown): Json {
  const ops = patchOperations(body);
  const doc = { ...resource, meta: { created: new Date(0), lastModified: new Date(0) }, schemas: resource.schemas as string[] };
  try {
    return scimPatch(doc, ops, { mutateDocument: false, treatMissingAsAdd: true });
  } catch (err) {
    if (err instanceof PatchError) {
      const code = (err as PatchError & { scimCode?: string }).scimCode;
      const scimType = (code && SCIM_TYPES.has(code) ? code : 'invalidValue') as ScimType;
      throw ScimError.badRequest(scimType, err.message || 'The PATCH cannot be applied.');
    }
    // Anything else the library throws is about this request's operations on this document.
    throw ScimError.badRequest('invalidValue', 'The PATCH cannot be applied to this resource.');
  }
}

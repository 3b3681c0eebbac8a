/**
 * A SCIM list's parameters (RFC 7644 §3.4.2: filter, sortBy/sortOrder, startIndex/count,
 * attributes/excludedAttributes), from a query string or a POST /.search body, and the
 * attribute projection applied to each answered resource.
 */
import type { ScimListQuery } from '../../domain/scim';
import { ScimError } from '../../domain/scim-error';
import { type AttrMap, attrKey, filterToSql } from '../../infra/scim-filter';
import { type Json, SCHEMA, isObject } from './resources';

/** The advertised `filter.maxResults`: the largest page. */
export const MAX_RESULTS = 200;
/** The largest startIndex (and count) read: an offset PostgreSQL takes, far beyond any list. */
const MAX_INDEX = 2_000_000_000;

export interface ListParams {
  readonly filter?: string;
  readonly sortBy?: string;
  readonly sortOrder?: string;
  readonly startIndex?: string | number;
  readonly count?: string | number;
  readonly attributes?: string | readonly string[];
  readonly excludedAttributes?: string | readonly string[];
}

const integer = (v: string | number | undefined, fallback: number): number => {
  if (v === undefined || v === '') return fallback;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n) || Math.abs(n) > MAX_INDEX) throw ScimError.badRequest('invalidValue', `startIndex and count are integers up to ${MAX_INDEX}.`);
  return n;
};

/** The list's SQL-side query: the filter translated (parameters after the organization's `$1`). */
export function listQuery(p: ListParams, map: AttrMap): { query: ScimListQuery; startIndex: number } {
  const startIndex = Math.max(1, integer(p.startIndex, 1));
  const count = Math.min(MAX_RESULTS, Math.max(0, integer(p.count, 100)));
  let sortBy: string | null = null;
  if (p.sortBy) {
    const attr = map[attrKey(p.sortBy)];
    if (attr?.kind !== 'scalar') throw ScimError.badRequest('invalidValue', `Cannot sort by ${p.sortBy.slice(0, 100)}.`);
    sortBy = attr.sql;
  }
  const order = (p.sortOrder ?? 'ascending').toLowerCase();
  if (order !== 'ascending' && order !== 'descending') throw ScimError.badRequest('invalidValue', 'sortOrder is ascending or descending.');
  const where = p.filter !== undefined && p.filter.trim() !== '' ? filterToSql(p.filter, map, 1) : null;
  return { query: { where, sortBy, descending: order === 'descending', offset: startIndex - 1, count }, startIndex };
}

/** A POST /.search body (a SearchRequest) as list parameters. */
export function searchParams(body: unknown): ListParams {
  if (!isObject(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a SearchRequest.');
  const s = (k: string): string | undefined => {
    const v = body[k];
    return typeof v === 'string' ? v : undefined;
  };
  const n = (k: string): number | undefined => {
    const v = body[k];
    return typeof v === 'number' ? v : undefined;
  };
  const list = (k: string): readonly string[] | undefined => (Array.isArray(body[k]) ? (body[k] as unknown[]).map(String) : undefined);
  return { filter: s('filter'), sortBy: s('sortBy'), sortOrder: s('sortOrder'), startIndex: n('startIndex'), count: n('count'), attributes: list('attributes'), excludedAttributes: list('excludedAttributes') };
}

export const listResponse = (resources: Json[], totalResults: number, startIndex: number): Json => ({
  schemas: [SCHEMA.list],
  totalResults,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});

const names = (v: string | readonly string[] | undefined): string[] =>
  (typeof v === 'string' ? v.split(',') : (v ?? [])).map((s) => s.trim()).filter((s) => s !== '');

/** Attributes always returned (RFC 7643 §7 `returned: always`). */
const ALWAYS = new Set(['id', 'schemas']);

/** Splits a path into [extension URN or '', attribute, sub-attribute?]. */
function split(path: string): [string, string, string | undefined] {
  const m = /^(urn:[^ ]+:[^:.]+):([^:]+)$/i.exec(path);
  let container = '';
  let rest = path;
  if (m && /^urn:/i.test(path)) {
    const core = /:core:2\.0:(user|group)$/i.test(m[1]!);
    container = core ? '' : m[1]!;
    rest = m[2]!;
  }
  const [attr, sub] = rest.split('.', 2) as [string, string | undefined];
  return [container.toLowerCase(), attr.toLowerCase(), sub?.toLowerCase()];
}

/** The resource with only the attributes asked for (or without those excluded). */
export function project(resource: Json, p: Pick<ListParams, 'attributes' | 'excludedAttributes'>): Json {
  const include = names(p.attributes).map(split);
  const exclude = names(p.excludedAttributes).map(split);
  if (include.length === 0 && exclude.length === 0) return resource;
  const keep = (container: string, key: string, sub?: string): boolean => {
    const k = key.toLowerCase();
    if (!container && ALWAYS.has(k)) return true;
    const matches = (s: [string, string, string | undefined]) => s[0] === container && s[1] === k && (sub === undefined || s[2] === undefined || s[2] === sub);
    if (include.length > 0) return include.some((s) => s[0] === container && s[1] === k && (sub === undefined || s[2] === undefined || s[2] === sub));
    return !exclude.some((s) => matches(s) && (s[2] === undefined || sub !== undefined));
  };
  const pick = (o: Json, container: string): Json => {
    const out: Json = {};
    for (const [k, v] of Object.entries(o)) {
      if (/^urn:/i.test(k) && isObject(v)) {
        const inner = pick(v, k.toLowerCase());
        if (Object.keys(inner).length > 0) out[k] = inner;
        continue;
      }
      if (!keep(container, k)) {
        // A parent asked for by one of its sub-attributes only.
        if (include.some((s) => s[0] === container && s[1] === k.toLowerCase() && s[2] !== undefined) && isObject(v)) {
          out[k] = Object.fromEntries(Object.entries(v).filter(([sk]) => keep(container, k, sk.toLowerCase())));
        }
        continue;
      }
      if (isObject(v) && exclude.some((s) => s[0] === container && s[1] === k.toLowerCase() && s[2] !== undefined)) {
        out[k] = Object.fromEntries(Object.entries(v).filter(([sk]) => keep(container, k, sk.toLowerCase())));
      } else out[k] = v;
    }
    return out;
  };
  return pick(resource, '');
}

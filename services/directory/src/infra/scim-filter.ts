/**
 * SCIM filters (RFC 7644 §3.4.2.2) to parameterised SQL: the text is bounded (length, nesting,
 * comparisons) before `scim2-parse-filter` parses it into an AST, and the AST is translated here
 * against a fixed attribute map per resource type. Attribute names pick one of the map's SQL
 * expressions (an unknown one is a 400 `invalidFilter`); every value becomes a parameter. Nothing
 * is ever evaluated as code, and no caller text reaches the SQL.
 */
import { escapeLike } from '@iam/platform';
import { type Filter, parse } from 'scim2-parse-filter';
import { ScimError } from '../domain/scim-error';
import type { SqlCondition } from '../domain/scim';

export const FILTER_MAX_LENGTH = 2_000;
export const FILTER_MAX_DEPTH = 8;
export const FILTER_MAX_COMPARISONS = 40;

/** How a value compares: `ci` strings case-insensitively, `exact` case-sensitively, `email` as a lower-cased address (index-friendly equality). */
export type ValueType = 'ci' | 'exact' | 'email' | 'boolean' | 'date' | 'uuid';

export interface ScalarAttr {
  readonly kind: 'scalar';
  readonly sql: string;
  readonly type: ValueType;
}

/** A multi-valued attribute: `from` yields one row per value (correlated), its sub-attributes' expressions over it. */
export interface MultiAttr {
  readonly kind: 'multi';
  readonly from: string;
  readonly subs: Readonly<Record<string, ScalarAttr>>;
}

export type AttrMap = Readonly<Record<string, ScalarAttr | MultiAttr>>;

const invalid = (detail: string) => ScimError.badRequest('invalidFilter', detail);

const URN_PREFIX = /^urn:ietf:params:scim:schemas:(core:2\.0:(user|group)|extension:enterprise:2\.0:user):/i;

/** The attribute map's key of a path: lower case; a core URN prefix dropped, the Enterprise one as `enterprise:`. */
export function attrKey(path: string): string {
  const m = URN_PREFIX.exec(path);
  if (!m) return path.toLowerCase();
  const rest = path.slice(m[0].length).toLowerCase();
  return m[1]!.toLowerCase().startsWith('extension') ? `enterprise:${rest}` : rest;
}

/** Rejects what would cost unbounded parsing: too long, too deeply nested (outside quoted strings). */
function checkBounds(text: string): void {
  if (text.length > FILTER_MAX_LENGTH) throw invalid(`A filter is at most ${FILTER_MAX_LENGTH} characters.`);
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(' || c === '[') {
      depth++;
      if (depth > FILTER_MAX_DEPTH) throw invalid(`A filter nests at most ${FILTER_MAX_DEPTH} levels.`);
    } else if (c === ')' || c === ']') depth--;
  }
}

/** The parsed filter, bounded; a 400 `invalidFilter` for anything the grammar or the bounds refuse. */
export function parseFilter(text: string): Filter {
  checkBounds(text);
  try {
    return parse(text);
  } catch {
    throw invalid('The filter is not valid SCIM filter syntax.');
  }
}

class Builder {
  readonly params: unknown[] = [];
  comparisons = 0;
  constructor(private readonly offset: number) {}
  param(v: unknown): string {
    this.params.push(v);
    return `$${this.offset + this.params.length}`;
  }
}

function compare(b: Builder, attr: ScalarAttr, op: string, value: unknown): string {
  if (++b.comparisons > FILTER_MAX_COMPARISONS) throw invalid(`A filter has at most ${FILTER_MAX_COMPARISONS} comparisons.`);
  const x = attr.sql;
  if (op === 'pr') return attr.type === 'boolean' || attr.type === 'date' || attr.type === 'uuid' ? `${x} IS NOT NULL` : `(${x} IS NOT NULL AND ${x} <> '')`;
  if (value === null) {
    if (op === 'eq') return `${x} IS NULL`;
    if (op === 'ne') return `${x} IS NOT NULL`;
    throw invalid(`${op} null is not a comparison.`);
  }
  if (attr.type === 'boolean') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) throw invalid('A boolean attribute compares only by eq or ne with true or false.');
    return op === 'eq' ? `${x} = ${b.param(value)}` : `${x} IS DISTINCT FROM ${b.param(value)}`;
  }
  if (typeof value !== 'string') throw invalid('This attribute compares with a string.');
  if (attr.type === 'date') {
    if (Number.isNaN(Date.parse(value))) throw invalid('A date attribute compares with an xsd:dateTime string.');
    const sym = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
    if (!sym) throw invalid(`${op} does not apply to a date.`);
    return `${x} ${sym} ${b.param(new Date(value).toISOString())}::timestamptz`;
  }
  if (attr.type === 'uuid') {
    if (op !== 'eq' && op !== 'ne') throw invalid('An id compares only by eq or ne.');
    const ok = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
    if (op === 'eq') return ok ? `${x} = ${b.param(value.toLowerCase())}::uuid` : 'false';
    return ok ? `${x} <> ${b.param(value.toLowerCase())}::uuid` : 'true';
  }
  const exact = attr.type === 'exact';
  const lhs = exact || attr.type === 'email' ? x : `lower(${x})`;
  const v = exact ? value : value.toLowerCase();
  const like = (pattern: string) => `${x} ${exact ? 'LIKE' : 'ILIKE'} ${b.param(pattern)} ESCAPE '\\'`;
  switch (op) {
    case 'eq':
      return `${lhs} = ${b.param(v)}`;
    case 'ne':
      return `(${x} IS NULL OR ${lhs} <> ${b.param(v)})`;
    case 'co':
      return like(`%${escapeLike(value)}%`);
    case 'sw':
      return like(`${escapeLike(value)}%`);
    case 'ew':
      return like(`%${escapeLike(value)}`);
    default: {
      const sym = { gt: '>', ge: '>=', lt: '<', le: '<=' }[op];
      if (!sym) throw invalid(`Unknown operator ${op}.`);
      return `${lhs} ${sym} ${b.param(v)}`;
    }
  }
}

function lookup(map: AttrMap, path: string): { attr: ScalarAttr | MultiAttr; sub?: string } {
  const key = attrKey(path);
  const direct = map[key];
  if (direct) return { attr: direct };
  const dot = key.lastIndexOf('.');
  if (dot > 0) {
    const parent = map[key.slice(0, dot)];
    if (parent?.kind === 'multi') return { attr: parent, sub: key.slice(dot + 1) };
  }
  throw invalid(`The filter names an attribute that cannot be filtered on: ${path.slice(0, 100)}.`);
}

function subAttr(multi: MultiAttr, name: string): ScalarAttr {
  const sub = multi.subs[name.toLowerCase()];
  if (!sub) throw invalid(`Unknown sub-attribute ${name.slice(0, 100)}.`);
  return sub;
}

function translate(b: Builder, map: AttrMap, f: Filter, depth: number): string {
  if (depth > FILTER_MAX_DEPTH * 2) throw invalid(`A filter nests at most ${FILTER_MAX_DEPTH} levels.`);
  switch (f.op) {
    case 'and':
    case 'or':
      return `(${f.filters.map((x) => translate(b, map, x, depth + 1)).join(f.op === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      return `NOT coalesce(${translate(b, map, f.filter, depth + 1)}, false)`;
    case '[]': {
      const { attr, sub } = lookup(map, f.attrPath);
      if (attr.kind !== 'multi' || sub) throw invalid(`${f.attrPath.slice(0, 100)} is not multi-valued.`);
      return `EXISTS (SELECT 1 FROM ${attr.from} WHERE ${translate(b, attr.subs, f.valFilter, depth + 1)})`;
    }
    default: {
      const { attr, sub } = lookup(map, f.attrPath);
      const value = 'compValue' in f ? f.compValue : undefined;
      if (attr.kind === 'scalar') return compare(b, attr, f.op, value);
      return `EXISTS (SELECT 1 FROM ${attr.from} WHERE ${compare(b, subAttr(attr, sub ?? 'value'), f.op, value)})`;
    }
  }
}

/** The filter as a condition whose parameters are numbered from `$<offset + 1>`. */
export function filterToSql(text: string, map: AttrMap, offset: number): SqlCondition {
  const ast = parseFilter(text);
  const b = new Builder(offset);
  const sql = translate(b, map, ast, 0);
  return { sql, params: b.params };
}

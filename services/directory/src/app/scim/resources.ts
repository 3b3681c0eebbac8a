/**
 * The SCIM representations (RFC 7643) of the directory's rows, and what a client sends, read
 * into the platform's fields. The mapping (services/directory README, "SCIM"):
 * - `userName` is kept as sent, unique in the organization case-insensitively (Entra sends a UPN
 *   or any string); the platform's email (the sign-in identifier, unique platform-wide) is the
 *   primary email (else the first `work` one, else the first, else `userName` when it is an address);
 * - `name.givenName`/`name.familyName` the first and last names;
 * - `active` the account's disabled flag (`users.disabled_at`);
 * - `externalId` (unique per connection), `displayName`, `emails`, `phoneNumbers`, the other
 *   core attributes and the Enterprise extension are kept as sent in `scim_users.attributes`.
 */
import type { ScimGroupRow, ScimUserRow } from '../../domain/scim';
import { Violations, checkName } from '../../domain/rules';
import { ScimError } from '../../domain/scim-error';

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  /** The platform's Group extension: the organization roles a group's members hold. */
  groupRoles: 'urn:iam:params:scim:schemas:extension:organization:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  bulkRequest: 'urn:ietf:params:scim:api:messages:2.0:BulkRequest',
  bulkResponse: 'urn:ietf:params:scim:api:messages:2.0:BulkResponse',
  search: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
} as const;

export type Json = Record<string, unknown>;

/** Core attributes kept as sent (no platform column). */
const KEPT = ['displayName', 'nickName', 'profileUrl', 'title', 'userType', 'preferredLanguage', 'locale', 'timezone', 'emails', 'phoneNumbers', 'addresses', 'photos', 'ims', 'x509Certificates'] as const;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A weak ETag of a row version. */
export const etagOf = (version: string): string => `W/"${version}"`;

/** An attribute of an object by its name, case-insensitively (RFC 7643 §2.1). */
export function field(o: Json, name: string): unknown {
  if (name in o) return o[name];
  const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : o[key];
}

export function toScimUser(r: ScimUserRow, base: string): Json {
  const a = r.attributes;
  const kept = Object.fromEntries(KEPT.filter((k) => a[k] !== undefined).map((k) => [k, a[k]]));
  const nameExtra = isObject(a.name) ? a.name : {};
  const enterprise = isObject(a.enterprise) ? a.enterprise : undefined;
  return {
    schemas: enterprise ? [SCHEMA.user, SCHEMA.enterprise] : [SCHEMA.user],
    id: r.userId,
    ...(r.externalId !== null ? { externalId: r.externalId } : {}),
    userName: r.userName,
    name: { ...nameExtra, givenName: r.firstName, familyName: r.lastName },
    active: r.active,
    ...kept,
    emails: kept.emails ?? [{ value: r.email, type: 'work', primary: true }],
    ...(enterprise ? { [SCHEMA.enterprise]: enterprise } : {}),
    meta: { resourceType: 'User', created: r.createdAt.toISOString(), lastModified: r.updatedAt.toISOString(), location: `${base}/Users/${r.userId}`, version: etagOf(r.version) },
  };
}

export function toScimGroup(g: ScimGroupRow, base: string, withMembers = true): Json {
  return {
    schemas: [SCHEMA.group, SCHEMA.groupRoles],
    id: g.id,
    ...(g.externalId !== null ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    ...(withMembers ? { members: g.members.map((m) => ({ value: m.userId, display: m.display, $ref: `${base}/Users/${m.userId}`, type: 'User' })) } : {}),
    [SCHEMA.groupRoles]: { roles: [...g.roles] },
    meta: { resourceType: 'Group', created: g.createdAt.toISOString(), lastModified: g.updatedAt.toISOString(), location: `${base}/Groups/${g.id}`, version: etagOf(g.version) },
  };
}

/** What a User document sets on the platform: the mapped fields and the kept attributes. */
export interface UserInput {
  readonly userName: string;
  /** The address the platform's account gets (not yet checked). */
  readonly email: string;
  readonly givenName: string | undefined;
  readonly familyName: string | undefined;
  readonly active: boolean;
  readonly externalId: string | null;
  readonly attributes: Json;
}

const text = (v: unknown, what: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw ScimError.badRequest('invalidValue', `${what} must be a string.`);
  return v;
};

/** `True`/`"false"` as Entra sends them, or a JSON boolean. */
export function booleanOf(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw ScimError.badRequest('invalidValue', `${what} must be a boolean.`);
}

export function readUser(doc: unknown): UserInput {
  if (!isObject(doc)) throw ScimError.badRequest('invalidSyntax', 'The body must be a SCIM User object.');
  const userName = text(field(doc, 'userName'), 'userName');
  if (!userName || userName.length > 256) throw ScimError.badRequest('invalidValue', 'userName is required (at most 256 characters).');
  const name = field(doc, 'name');
  if (name !== undefined && name !== null && !isObject(name)) throw ScimError.badRequest('invalidValue', 'name must be an object.');
  const active = field(doc, 'active');
  const externalId = text(field(doc, 'externalId'), 'externalId') ?? null;
  if (externalId !== null && externalId.length > 500) throw ScimError.badRequest('invalidValue', 'externalId is at most 500 characters.');
  const attributes: Json = {};
  for (const k of KEPT) {
    const v = field(doc, k);
    if (v !== undefined && v !== null) attributes[k] = v;
  }
  for (const k of ['emails', 'phoneNumbers', 'addresses'] as const) {
    if (attributes[k] !== undefined && !Array.isArray(attributes[k])) throw ScimError.badRequest('invalidValue', `${k} must be an array.`);
  }
  const n = isObject(name) ? name : {};
  const restOfName = Object.fromEntries(Object.entries(n).filter(([k]) => !['givenname', 'familyname'].includes(k.toLowerCase())));
  if (Object.keys(restOfName).length > 0) attributes.name = restOfName;
  const enterprise = field(doc, SCHEMA.enterprise);
  if (enterprise !== undefined && enterprise !== null) {
    if (!isObject(enterprise)) throw ScimError.badRequest('invalidValue', 'The Enterprise extension must be an object.');
    attributes.enterprise = enterprise;
  }
  const email = emailOf(attributes.emails, userName);
  if (attributes.emails === undefined) attributes.emails = [{ value: email, type: 'work', primary: true }];
  if (JSON.stringify(attributes).length > 16_384) throw ScimError.badRequest('invalidValue', 'The user’s attributes are at most 16 KiB.');
  return {
    userName,
    email,
    givenName: text(field(n, 'givenName'), 'name.givenName'),
    familyName: text(field(n, 'familyName'), 'name.familyName'),
    active: active === undefined || active === null ? true : booleanOf(active, 'active'),
    externalId,
    attributes,
  };
}

export interface GroupInput {
  readonly displayName: string;
  readonly externalId: string | null;
  /** Member user ids (undefined: not given). */
  readonly members: readonly string[] | undefined;
  /** Organization role names (undefined: not given). */
  readonly roles: readonly string[] | undefined;
}

export function readGroup(doc: unknown): GroupInput {
  if (!isObject(doc)) throw ScimError.badRequest('invalidSyntax', 'The body must be a SCIM Group object.');
  const v = new Violations();
  const displayName = checkName(v, 'displayName', text(field(doc, 'displayName'), 'displayName') ?? '', 200);
  v.throwIfAny('displayName is required: at most 200 characters, no control characters.');
  const members = field(doc, 'members');
  if (members !== undefined && members !== null && !Array.isArray(members)) throw ScimError.badRequest('invalidValue', 'members must be an array.');
  const ext = field(doc, SCHEMA.groupRoles);
  const roles = isObject(ext) ? field(ext, 'roles') : undefined;
  if (roles !== undefined && (!Array.isArray(roles) || roles.some((r) => typeof r !== 'string'))) throw ScimError.badRequest('invalidValue', 'roles must be an array of role names.');
  return {
    displayName,
    externalId: text(field(doc, 'externalId'), 'externalId') ?? null,
    members: Array.isArray(members) ? members.map((m) => memberId(m)) : undefined,
    roles: Array.isArray(roles) ? roles.map(String) : undefined,
  };
}

/** The primary email, else the first `work` one, else the first, else userName. */
function emailOf(emails: unknown, userName: string): string {
  const list = Array.isArray(emails) ? emails.filter(isObject) : [];
  const pick = list.find((e) => e.primary === true || e.primary === 'true') ?? list.find((e) => String(e.type).toLowerCase() === 'work') ?? list[0];
  const value = pick?.value;
  return typeof value === 'string' && value.trim() !== '' ? value : userName;
}

function memberId(m: unknown): string {
  const v = isObject(m) ? field(m, 'value') : undefined;
  if (typeof v !== 'string') throw ScimError.badRequest('invalidValue', 'Each member needs a value (a user id).');
  return v;
}

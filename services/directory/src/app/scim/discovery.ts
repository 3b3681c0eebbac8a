/**
 * The discovery endpoints (RFC 7644 §4): ServiceProviderConfig says what this server does
 * (and only that), ResourceTypes the two types, Schemas the attributes it keeps.
 */
import { MAX_RESULTS } from './query';
import { type Json, SCHEMA } from './resources';

/** Bulk limits, advertised and enforced (413 beyond them). */
export const BULK_MAX_OPERATIONS = 100;
export const BULK_MAX_PAYLOAD_BYTES = 1_048_576;

export function serviceProviderConfig(base: string): Json {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: 'https://github.com/iam/platform/blob/main/services/directory/README.md#scim',
    patch: { supported: true },
    bulk: { supported: true, maxOperations: BULK_MAX_OPERATIONS, maxPayloadSize: BULK_MAX_PAYLOAD_BYTES },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      { type: 'oauthbearertoken', name: 'Bearer token', description: "A SCIM connection's token, made by an organization administrator", primary: true },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): Json[] {
  return [
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      schema: SCHEMA.user,
      schemaExtensions: [{ schema: SCHEMA.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      schema: SCHEMA.group,
      schemaExtensions: [{ schema: SCHEMA.groupRoles, required: false }],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

type Attr = [name: string, type: string, opts?: { multi?: boolean; required?: boolean; caseExact?: boolean; unique?: 'server' | 'none'; mutability?: string; sub?: Attr[] }];

const attribute = ([name, type, o = {}]: Attr): Json => ({
  name,
  type,
  multiValued: o.multi ?? false,
  required: o.required ?? false,
  caseExact: o.caseExact ?? false,
  mutability: o.mutability ?? 'readWrite',
  returned: 'default',
  uniqueness: o.unique ?? 'none',
  ...(o.sub ? { subAttributes: o.sub.map(attribute) } : {}),
});

const multi: Attr[] = [['value', 'string'], ['type', 'string'], ['display', 'string'], ['primary', 'boolean']];

const USER: Attr[] = [
  ['userName', 'string', { required: true, unique: 'server' }],
  ['externalId', 'string', { caseExact: true }],
  ['name', 'complex', { sub: [['givenName', 'string'], ['familyName', 'string'], ['formatted', 'string'], ['middleName', 'string']] }],
  ['displayName', 'string'],
  ['nickName', 'string'],
  ['title', 'string'],
  ['userType', 'string'],
  ['preferredLanguage', 'string'],
  ['locale', 'string'],
  ['timezone', 'string'],
  ['active', 'boolean'],
  ['emails', 'complex', { multi: true, sub: multi }],
  ['phoneNumbers', 'complex', { multi: true, sub: multi }],
  ['addresses', 'complex', { multi: true, sub: [['formatted', 'string'], ['streetAddress', 'string'], ['locality', 'string'], ['region', 'string'], ['postalCode', 'string'], ['country', 'string'], ['type', 'string']] }],
];

const ENTERPRISE: Attr[] = [
  ['employeeNumber', 'string'],
  ['costCenter', 'string'],
  ['organization', 'string'],
  ['division', 'string'],
  ['department', 'string'],
  ['manager', 'complex', { sub: [['value', 'string'], ['displayName', 'string', { mutability: 'readOnly' }]] }],
];

const GROUP: Attr[] = [
  ['displayName', 'string', { required: true, unique: 'server' }],
  ['externalId', 'string', { caseExact: true }],
  ['members', 'complex', { multi: true, sub: [['value', 'string', { mutability: 'immutable' }], ['display', 'string', { mutability: 'readOnly' }]] }],
];

const schema = (id: string, name: string, attrs: Attr[], base: string): Json => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
  id,
  name,
  attributes: attrs.map(attribute),
  meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
});

export function schemas(base: string): Json[] {
  return [
    schema(SCHEMA.user, 'User', USER, base),
    schema(SCHEMA.enterprise, 'EnterpriseUser', ENTERPRISE, base),
    schema(SCHEMA.group, 'Group', GROUP, base),
    schema(SCHEMA.groupRoles, 'OrganizationGroup', [['roles', 'string', { multi: true }]], base),
  ];
}

/**
 * The console's forms hold the API's own limits, whatever the generated files say: each field of
 * a REST form is a field of the body its operation takes in the gateway's Full-profile OpenAPI
 * document, required (or needing a character) and with the lengths that document gives; each
 * field of a product form is a field of its edge GraphQL input, required when the schema's type
 * is non-null without a default. Fails when a gateway schema changed and `make api` was not run.
 */
import { edgeTypeDefs, openApiDocument } from '@iam/gateway';
import { GraphQLInputObjectType, GraphQLNonNull, buildSchema } from 'graphql';
import type { FieldSpec } from '../src/api/fields';
import * as accountForms from '../src/account/fields';
import * as consoleForms from '../src/forms';

/** The console's forms and the account page's. */
const forms = { ...consoleForms, ...accountForms };

interface Property {
  minLength?: number;
  maxLength?: number;
  maximum?: number;
  anyOf?: Property[];
  type?: string;
}
interface Body {
  required?: string[];
  properties: Record<string, Property>;
}
type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Body }> } }>> };

/** What a form field must say, from the schema of the body it goes into. */
function expected(body: Body, name: string): Pick<FieldSpec, 'name' | 'required' | 'minLength' | 'maxLength'> {
  const p = body.properties[name];
  if (!p) throw new Error(`the body has no field ${name}`);
  const value = (p.anyOf ?? [p]).find((b) => b.type !== 'null') ?? {};
  return {
    name,
    required: (body.required ?? []).includes(name) || (value.minLength ?? 0) > 0,
    ...(value.minLength ? { minLength: value.minLength } : {}),
    ...(value.maxLength ? { maxLength: value.maxLength } : {}),
    // An integer (the phone): as many digits as its maximum has.
    ...(value.type === 'integer' && value.maximum !== undefined ? { maxLength: String(value.maximum).length } : {}),
  };
}
const limitsOf = (f: FieldSpec) => ({ name: f.name, required: f.required, ...(f.minLength ? { minLength: f.minLength } : {}), ...(f.maxLength ? { maxLength: f.maxLength } : {}) });

const REST: Array<[keyof typeof forms, string, string]> = [
  ['USER_CREATE_FIELDS', '/api/v1/users', 'post'],
  ['USER_EDIT_FIELDS', '/api/v1/users/{id}', 'put'],
  ['ROLE_FIELDS', '/api/v1/roles', 'post'],
  ['ROLE_EDIT_FIELDS', '/api/v1/roles/{id}', 'put'],
  ['PERMISSION_FIELDS', '/api/v1/permissions', 'post'],
  ['RESET_FACTORS_FIELDS', '/api/v1/users/{id}/mfa/reset', 'post'],
  ['NAME_FIELDS', '/api/v1/me', 'put'],
  ['PASSWORD_FIELDS', '/api/v1/me/password', 'post'],
  ['EMAIL_FIELDS', '/api/v1/me/email', 'post'],
  ['ORGANIZATION_FIELDS', '/api/v1/organizations', 'post'],
  ['INVITE_FIELDS', '/api/v1/organizations/{id}/invitations', 'post'],
  ['DOMAIN_FIELDS', '/api/v1/organizations/{id}/domains', 'post'],
  ['SCIM_CONNECTION_FIELDS', '/api/v1/organizations/{id}/scim-connections', 'post'],
];
const GRAPHQL: Array<[keyof typeof forms, string]> = [
  ['PRODUCT_CREATE_FIELDS', 'CreateProductInput'],
  ['PRODUCT_EDIT_FIELDS', 'CreateProductInput'],
  ['STOCK_FIELDS', 'AdjustStockInput'],
];

describe("the console's forms and the API's schemas", () => {
  let doc: Doc;
  beforeAll(async () => {
    doc = (await openApiDocument('full')) as unknown as Doc;
    // Building the gateway's document takes seconds on a loaded machine (the browser test runs beside it).
  }, 30_000);

  it.each(REST)('%s: the fields of %s %s, required and with the lengths the OpenAPI document gives', (list, path, method) => {
    const body = doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
    expect(body).toBeDefined();
    const fields = forms[list] as ReadonlyArray<FieldSpec>;
    expect(fields.map(limitsOf)).toEqual(fields.map((f) => expected(body!, f.name)));
  });

  it.each(GRAPHQL)('%s: fields of the GraphQL input %s, required as its types say', (list, typeName) => {
    const type = buildSchema(edgeTypeDefs).getType(typeName);
    expect(type).toBeInstanceOf(GraphQLInputObjectType);
    const inputs = (type as GraphQLInputObjectType).getFields();
    const fields = forms[list] as ReadonlyArray<FieldSpec>;
    expect(fields.map((f) => ({ name: f.name, required: f.required }))).toEqual(
      fields.map((f) => ({ name: f.name, required: inputs[f.name]!.type instanceof GraphQLNonNull && inputs[f.name]!.defaultValue === undefined })),
    );
  });

  it('every form is checked here', () => {
    const lists = Object.entries(forms).filter(([, v]) => Array.isArray(v)).map(([k]) => k);
    expect(lists.sort()).toEqual([...REST.map((r) => r[0]), ...GRAPHQL.map((g) => g[0])].sort());
  });
});

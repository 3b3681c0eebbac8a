/**
 * Every form's fields, one list per resource: how each field is shown, by the names of the API's
 * input (checked against the generated body and input types, so a name the API does not have
 * does not compile); which fields are required and their lengths come from the API's schema
 * (api/limits.generated.ts). `test/forms.test.ts` holds them against the gateway's own schemas.
 */
import { type BodyOf, type FieldViews, bodyFields, inputFields } from './api/fields';
import type { CreateProductInput, UpdateProductInput } from './api/limits.generated';

export const RESET_FACTORS_FIELDS = bodyFields('/api/v1/users/{id}/mfa/reset', 'post', { reason: { label: 'Reason (kept in the audit trail)' } }, ['reason']);

const USER = {
  firstName: { label: 'First name' },
  lastName: { label: 'Last name' },
  email: { label: 'Email', type: 'email', autoComplete: 'off' },
  phone: { label: 'Phone (digits only)', type: 'tel', autoComplete: 'off' },
  password: { label: 'Password', type: 'password', autoComplete: 'new-password' },
} as const satisfies FieldViews<BodyOf<'/api/v1/users', 'post'>>;
export const USER_CREATE_FIELDS = bodyFields('/api/v1/users', 'post', USER, ['firstName', 'lastName', 'email', 'phone', 'password']);
export const USER_EDIT_FIELDS = bodyFields('/api/v1/users/{id}', 'put', USER, ['firstName', 'lastName', 'email', 'phone']);

const ROLE = { name: { label: 'Role name' }, description: { label: 'Description' } } as const satisfies FieldViews<BodyOf<'/api/v1/roles', 'post'>>;
export const ROLE_FIELDS = bodyFields('/api/v1/roles', 'post', ROLE, ['name', 'description']);
export const ROLE_EDIT_FIELDS = bodyFields('/api/v1/roles/{id}', 'put', ROLE, ['name', 'description']);
/** The one field a new permission is given here. */
export const PERMISSION_FIELDS = bodyFields('/api/v1/permissions', 'post', { name: { label: 'Permission name' } }, ['name']);

/** The edge GraphQL schema carries no lengths: commerce checks them, and its field errors show beside the fields. */
const PRODUCT = {
  sku: { label: 'SKU' },
  name: { label: 'Name' },
  description: { label: 'Description' },
  priceMinor: { label: 'Price in minor units (1999 = 19.99)' },
  currency: { label: 'Currency (ISO 4217, e.g. EUR)' },
  onHand: { label: 'Units on hand' },
} as const satisfies FieldViews<CreateProductInput>;
/** The details an edit sends, every one of them: required as when the product was created. */
const DETAILS = ['sku', 'name', 'description', 'priceMinor', 'currency'] as const satisfies ReadonlyArray<keyof UpdateProductInput>;
export const PRODUCT_CREATE_FIELDS = inputFields('CreateProductInput', PRODUCT, [...DETAILS, 'onHand']);
export const PRODUCT_EDIT_FIELDS = inputFields('CreateProductInput', PRODUCT, DETAILS);
export const STOCK_FIELDS = inputFields('AdjustStockInput', { delta: { label: 'Change in units on hand' }, setOnHand: { label: 'Or set units on hand to' } }, ['delta', 'setOnHand']);

/** The names of a field list's fields (what its form's values hold). */
export type NamesOf<F extends ReadonlyArray<{ name: string }>> = F[number]['name'];

/** Organizations (issue #41): a new organization, an invitation, a domain claim. */
export const ORGANIZATION_FIELDS = bodyFields('/api/v1/organizations', 'post', { name: { label: 'Name' }, slug: { label: 'Slug (lower case, e.g. acme-corp)' } }, ['name', 'slug']);
export const INVITE_FIELDS = bodyFields('/api/v1/organizations/{id}/invitations', 'post', { email: { label: 'Email to invite', type: 'email', autoComplete: 'off' } }, ['email']);
export const SCIM_CONNECTION_FIELDS = bodyFields('/api/v1/organizations/{id}/scim-connections', 'post', { name: { label: 'Connection name (e.g. Entra ID)', autoComplete: 'off' } }, ['name']);
export const DOMAIN_FIELDS = bodyFields('/api/v1/organizations/{id}/domains', 'post', { domain: { label: 'Domain (e.g. acme.example)' } }, ['domain']);

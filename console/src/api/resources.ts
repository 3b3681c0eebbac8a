/** Typed calls the pages use (types from the generated schema), and their TanStack Query keys. */
import { api, call } from './client';
import type { paths } from './schema';

type Ok<P extends keyof paths, M extends 'get'> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;
type Page<T> = Extract<T, { items: unknown }>;
type One<T> = Exclude<T, { items: unknown }>;

export type UserPage = Page<Ok<'/api/v1/users', 'get'>>;
export type User = One<Ok<'/api/v1/users', 'get'>>;
export type RolePage = Page<Ok<'/api/v1/roles', 'get'>>;
export type Role = One<Ok<'/api/v1/roles', 'get'>>;
export type PermissionPage = Page<Ok<'/api/v1/permissions', 'get'>>;
export type LinkPage = Page<Ok<'/api/v1/role-permissions', 'get'>>;
export type UserBody = NonNullable<paths['/api/v1/users']['post']['requestBody']>['content']['application/json'];
export type UserUpdate = NonNullable<paths['/api/v1/users/{id}']['put']['requestBody']>['content']['application/json'];
export type RoleBody = NonNullable<paths['/api/v1/roles']['post']['requestBody']>['content']['application/json'];
export type MailboxList = Ok<'/api/v1/dev/mailbox', 'get'>;
export type MailboxMail = Ok<'/api/v1/dev/mailbox/{id}', 'get'>;
export type RoleUpdate = NonNullable<paths['/api/v1/roles/{id}']['put']['requestBody']>['content']['application/json'];

/** The `sort` values a list offers (its key, '-' first for descending), from the API's schema. */
type SortOf<P extends '/api/v1/users' | '/api/v1/roles' | '/api/v1/permissions'> = NonNullable<NonNullable<paths[P]['get']['parameters']['query']>['sort']>;
export type UserSort = SortOf<'/api/v1/users'>;
export type RoleSort = SortOf<'/api/v1/roles'>;
export type PermissionSort = SortOf<'/api/v1/permissions'>;

export interface ListQuery<S extends string = never> {
  page: number;
  pageSize: number;
  q?: string;
  includeDeleted?: boolean;
  sort?: S;
}
const query = <S extends string>(l: ListQuery<S>) => ({
  page: l.page,
  pageSize: l.pageSize,
  ...(l.q ? { q: l.q } : {}),
  ...(l.includeDeleted ? { includeDeleted: true } : {}),
  ...(l.sort ? { sort: l.sort } : {}),
});

/** Every item of a list, fetched a page of 100 at a time (pickers must offer all of them). */
async function everyPage<T>(fetch: (page: number) => Promise<{ items: T[]; totalCount: number }>): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; ; page++) {
    const p = await fetch(page);
    all.push(...p.items);
    if (p.items.length < 100 || all.length >= p.totalCount) return all;
  }
}

export const keys = {
  users: ['users'] as const,
  roles: ['roles'] as const,
  permissions: ['permissions'] as const,
  links: ['role-permissions'] as const,
  audit: ['audit-events'] as const,
};

export const users = {
  list: (l: ListQuery<UserSort>) => call(() => api.GET('/api/v1/users', { params: { query: query(l) } })) as Promise<UserPage>,
  /** A deleted user too (their link in "Show deleted" opens them). */
  get: (id: string) => call(() => api.GET('/api/v1/users', { params: { query: { id, includeDeleted: true } } })) as Promise<User>,
  create: (body: UserBody) => call(() => api.POST('/api/v1/users', { body })),
  update: (id: string, body: UserUpdate) => call(() => api.PUT('/api/v1/users/{id}', { params: { path: { id } }, body })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/users/{id}', { params: { path: { id } } })),
};

export const roles = {
  list: (l: ListQuery<RoleSort>) => call(() => api.GET('/api/v1/roles', { params: { query: query(l) } })) as Promise<RolePage>,
  get: (id: string) => call(() => api.GET('/api/v1/roles', { params: { query: { id } } })) as Promise<Role>,
  all: () => everyPage((page) => roles.list({ page, pageSize: 100 })),
  create: (body: RoleBody) => call(() => api.POST('/api/v1/roles', { body })),
  update: (id: string, body: RoleUpdate) => call(() => api.PUT('/api/v1/roles/{id}', { params: { path: { id } }, body })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/roles/{id}', { params: { path: { id } } })),
};

export const permissions = {
  list: (l: ListQuery<PermissionSort>) => call(() => api.GET('/api/v1/permissions', { params: { query: query(l) } })) as Promise<PermissionPage>,
  all: () => everyPage((page) => permissions.list({ page, pageSize: 100 })),
  create: (name: string) => call(() => api.POST('/api/v1/permissions', { body: { name } })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/permissions/{id}', { params: { path: { id } } })),
};

export const links = {
  /** Every link of a role. */
  ofRole: (roleId: string) => everyPage((page) => call(() => api.GET('/api/v1/role-permissions', { params: { query: { roleId, page, pageSize: 100 } } })) as Promise<LinkPage>),
  grant: (roleId: string, permissionId: string) => call(() => api.POST('/api/v1/role-permissions', { body: { roleId, permissionId } })),
  revoke: (id: string) => call(() => api.DELETE('/api/v1/role-permissions/{id}', { params: { path: { id } } })),
};

export type AuditPage = Ok<'/api/v1/audit-events', 'get'>;
export type AuditEntry = AuditPage['items'][number];
export type ChainReport = Ok<'/api/v1/audit-events/verify', 'get'>;
export interface AuditFilter {
  actorId?: string;
  targetId?: string;
  action?: string;
  /** ISO 8601 */
  from?: string;
  to?: string;
}

export const audit = {
  list: (f: AuditFilter, cursor?: string) => {
    const query = Object.fromEntries(Object.entries({ ...f, cursor, pageSize: 25 }).filter(([, v]) => v !== undefined && v !== ''));
    return call(() => api.GET('/api/v1/audit-events', { params: { query } })) as Promise<AuditPage>;
  },
  verify: () => call(() => api.GET('/api/v1/audit-events/verify')) as Promise<ChainReport>,
};

export type SessionList = Ok<'/api/v1/me/sessions', 'get'>;
export type AccountSecurity = Ok<'/api/v1/users/{id}/security', 'get'>;

/** A user's lock, second factors and sessions (users.manage). */
export const security = {
  get: (id: string) => call(() => api.GET('/api/v1/users/{id}/security', { params: { path: { id } } })) as Promise<AccountSecurity>,
  sessions: (id: string) => call(() => api.GET('/api/v1/users/{id}/sessions', { params: { path: { id } } })) as Promise<SessionList>,
  endSessions: (id: string) => call(() => api.DELETE('/api/v1/users/{id}/sessions', { params: { path: { id } } })),
  endSession: (id: string, sid: string) => call(() => api.DELETE('/api/v1/users/{id}/sessions/{sid}', { params: { path: { id, sid } } })),
  unlock: (id: string) => call(() => api.POST('/api/v1/users/{id}/unlock', { params: { path: { id } } })),
  resetFactors: (id: string, reason: string) => call(() => api.POST('/api/v1/users/{id}/mfa/reset', { params: { path: { id } }, body: { reason } })),
};

export const auth = {
  passwordReset: (email: string) => call(() => api.POST('/api/v1/auth/password-reset/request', { body: { email } })),
  requestVerification: () => call(() => api.POST('/api/v1/auth/email-verification/request')),
};

export type ClientPage = Page<Ok<'/api/v1/clients', 'get'>>;
export type OAuthClient = One<Ok<'/api/v1/clients', 'get'>>;
export type ClientBody = NonNullable<paths['/api/v1/clients']['post']['requestBody']>['content']['application/json'];
export type ClientUpdate = NonNullable<paths['/api/v1/clients/{id}']['put']['requestBody']>['content']['application/json'];
/** A client with the secret just made (create, rotate, made confidential): shown once. */
export type ClientWithSecret = OAuthClient & { clientSecret?: string };

export type ProviderPage = Page<Ok<'/api/v1/identity-providers', 'get'>>;
export type IdentityProvider = One<Ok<'/api/v1/identity-providers', 'get'>>;
export type ProviderBody = NonNullable<paths['/api/v1/identity-providers']['post']['requestBody']>['content']['application/json'];
export type ProviderUpdate = NonNullable<paths['/api/v1/identity-providers/{id}']['put']['requestBody']>['content']['application/json'];

export const providerKeys = ['identity-providers'] as const;

/** Upstream identity providers (identity-providers.manage): their client secret goes in, never out. */
export const identityProviders = {
  list: (l: ListQuery) => call(() => api.GET('/api/v1/identity-providers', { params: { query: query(l) } })) as Promise<ProviderPage>,
  get: (id: string) => call(() => api.GET('/api/v1/identity-providers/{id}', { params: { path: { id } } })) as Promise<IdentityProvider>,
  create: (body: ProviderBody) => call(() => api.POST('/api/v1/identity-providers', { body })) as Promise<IdentityProvider>,
  update: (id: string, body: ProviderUpdate) => call(() => api.PUT('/api/v1/identity-providers/{id}', { params: { path: { id } }, body })) as Promise<IdentityProvider>,
  remove: (id: string) => call(() => api.DELETE('/api/v1/identity-providers/{id}', { params: { path: { id } } })),
};

export const clientKeys = ['clients'] as const;

export const clients = {
  list: (l: ListQuery) => call(() => api.GET('/api/v1/clients', { params: { query: query(l) } })) as Promise<ClientPage>,
  get: (id: string) => call(() => api.GET('/api/v1/clients/{id}', { params: { path: { id } } })) as Promise<OAuthClient>,
  create: (body: ClientBody) => call(() => api.POST('/api/v1/clients', { body })) as Promise<ClientWithSecret>,
  update: (id: string, body: ClientUpdate) => call(() => api.PUT('/api/v1/clients/{id}', { params: { path: { id } }, body })) as Promise<ClientWithSecret>,
  remove: (id: string) => call(() => api.DELETE('/api/v1/clients/{id}', { params: { path: { id } } })),
  rotateSecret: (id: string) => call(() => api.POST('/api/v1/clients/{id}/secret', { params: { path: { id } } })) as Promise<ClientWithSecret>,
};

/**
 * The development mailbox (make run without SMTP_URL; the Administrator role). Elsewhere the route does not
 * exist: 404, and the console shows no Mailbox page.
 */
export const mailbox = {
  key: ['dev-mailbox'] as const,
  list: () => call(() => api.GET('/api/v1/dev/mailbox')),
  get: (id: string) => call(() => api.GET('/api/v1/dev/mailbox/{id}', { params: { path: { id } } })),
};

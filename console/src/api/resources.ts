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

export interface ListQuery {
  page: number;
  pageSize: number;
  q?: string;
  includeDeleted?: boolean;
}
const query = (l: ListQuery) => ({ page: l.page, pageSize: l.pageSize, ...(l.q ? { q: l.q } : {}), ...(l.includeDeleted ? { includeDeleted: true } : {}) });

export const keys = {
  users: ['users'] as const,
  roles: ['roles'] as const,
  permissions: ['permissions'] as const,
  links: ['role-permissions'] as const,
};

export const users = {
  list: (l: ListQuery) => call(() => api.GET('/api/v1/users', { params: { query: query(l) } })) as Promise<UserPage>,
  get: (id: string) => call(() => api.GET('/api/v1/users', { params: { query: { id } } })) as Promise<User>,
  create: (body: UserBody) => call(() => api.POST('/api/v1/users', { body })),
  update: (id: string, body: UserUpdate) => call(() => api.PUT('/api/v1/users/{id}', { params: { path: { id } }, body })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/users/{id}', { params: { path: { id } } })),
};

export const roles = {
  list: (l: ListQuery) => call(() => api.GET('/api/v1/roles', { params: { query: query(l) } })) as Promise<RolePage>,
  get: (id: string) => call(() => api.GET('/api/v1/roles', { params: { query: { id } } })) as Promise<Role>,
  create: (name: string) => call(() => api.POST('/api/v1/roles', { body: { name } })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/roles/{id}', { params: { path: { id } } })),
};

export const permissions = {
  list: (l: ListQuery) => call(() => api.GET('/api/v1/permissions', { params: { query: query(l) } })) as Promise<PermissionPage>,
  create: (name: string) => call(() => api.POST('/api/v1/permissions', { body: { name } })),
  remove: (id: string) => call(() => api.DELETE('/api/v1/permissions/{id}', { params: { path: { id } } })),
};

export const links = {
  /** A role's links: searched by the role's name, kept to its id. */
  ofRole: async (roleId: string, roleName: string) => {
    const page = (await call(() => api.GET('/api/v1/role-permissions', { params: { query: { page: 1, pageSize: 100, q: roleName } } }))) as LinkPage;
    return page.items.filter((l) => l.roleId === roleId);
  },
  grant: (roleId: string, permissionId: string) => call(() => api.POST('/api/v1/role-permissions', { body: { roleId, permissionId } })),
  revoke: (id: string) => call(() => api.DELETE('/api/v1/role-permissions/{id}', { params: { path: { id } } })),
};

export const auth = {
  signIn: (email: string, password: string) => call(() => api.POST('/api/v1/auth/generate-jwt', { body: { email, password } })),
  revoke: () => call(() => api.POST('/api/v1/auth/revoke')),
  passwordReset: (email: string) => call(() => api.POST('/api/v1/auth/password-reset/request', { body: { email } })),
  requestVerification: () => call(() => api.POST('/api/v1/auth/email-verification/request')),
};

/** The organizations API (issue #41): typed calls and TanStack Query keys. The gateway lists the caller's organizations only, unless it holds organizations.manage. */
import { api, call } from './client';
import type { paths } from './schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Ok200<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: infer R } } ? Json<R> : never;
type Ok201<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 201: infer R } } ? Json<R> : never;

export type OrganizationPage = Extract<Ok200<'/api/v1/organizations', 'get'>, { items: unknown }>;
export type Organization = Ok200<'/api/v1/organizations/{id}', 'get'>;
export type MemberPage = Ok200<'/api/v1/organizations/{id}/members', 'get'>;
export type InvitationPage = Ok200<'/api/v1/organizations/{id}/invitations', 'get'>;
export type DomainPage = Ok200<'/api/v1/organizations/{id}/domains', 'get'>;
export type Invitation = Ok201<'/api/v1/organizations/{id}/invitations', 'post'>;
export type ScimConnectionPage = Ok200<'/api/v1/organizations/{id}/scim-connections', 'get'>;
export type CreatedScimConnection = Ok201<'/api/v1/organizations/{id}/scim-connections', 'post'>;
export type OrganizationBody = NonNullable<paths['/api/v1/organizations']['post']['requestBody']>['content']['application/json'];

export const organizationKeys = { all: ['organizations'] as const, one: (id: string) => ['organizations', id] as const };

const path = (id: string) => ({ params: { path: { id } } });
const paging = (q: { page: number; pageSize: number; q?: string }) => ({ page: q.page, pageSize: q.pageSize, ...(q.q ? { q: q.q } : {}) });

export const organizations = {
  list: (q: { page: number; pageSize: number; q?: string }) => call(() => api.GET('/api/v1/organizations', { params: { query: paging(q) } })) as Promise<OrganizationPage>,
  get: (id: string) => call(() => api.GET('/api/v1/organizations/{id}', path(id))) as Promise<Organization>,
  create: (body: OrganizationBody) => call(() => api.POST('/api/v1/organizations', { body })) as Promise<Organization>,
  members: (id: string, q: { page: number; pageSize: number; q?: string }) =>
    call(() => api.GET('/api/v1/organizations/{id}/members', { params: { path: { id }, query: paging(q) } })) as Promise<MemberPage>,
  removeMember: (id: string, userId: string) => call(() => api.DELETE('/api/v1/organizations/{id}/members/{userId}', { params: { path: { id, userId } } })),
  invitations: (id: string) => call(() => api.GET('/api/v1/organizations/{id}/invitations', { params: { path: { id }, query: { pageSize: 100 } } })) as Promise<InvitationPage>,
  invite: (id: string, email: string) => call(() => api.POST('/api/v1/organizations/{id}/invitations', { ...path(id), body: { email, roles: [] } })) as Promise<Invitation>,
  domains: (id: string) => call(() => api.GET('/api/v1/organizations/{id}/domains', { params: { path: { id }, query: { pageSize: 100 } } })) as Promise<DomainPage>,
  claimDomain: (id: string, domain: string) => call(() => api.POST('/api/v1/organizations/{id}/domains', { ...path(id), body: { domain } })),
  scimConnections: (id: string) => call(() => api.GET('/api/v1/organizations/{id}/scim-connections', { params: { path: { id }, query: { pageSize: 100 } } })) as Promise<ScimConnectionPage>,
  createScimConnection: (id: string, name: string) => call(() => api.POST('/api/v1/organizations/{id}/scim-connections', { ...path(id), body: { name } })) as Promise<CreatedScimConnection>,
  revokeScimConnection: (id: string, connectionId: string) => call(() => api.DELETE('/api/v1/organizations/{id}/scim-connections/{connectionId}', { params: { path: { id, connectionId } } })),
  verifyDomain: (id: string, domainId: string) => call(() => api.POST('/api/v1/organizations/{id}/domains/{domainId}/verify', { params: { path: { id, domainId } } })),
};

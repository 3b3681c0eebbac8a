/**
 * The account page's calls: the caller's own record and sessions, through the console's one
 * client (openapi-fetch over the generated types, the bearer token of the OP sign-in, one refresh
 * on 401), with TanStack Query keys.
 */
import { api, call } from '../api/client';
import type { paths } from '../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type Me = Json<paths['/api/v1/me']['get']['responses'][200]>;
export type MySession = Json<paths['/api/v1/me/sessions']['get']['responses'][200]>['items'][number];

export const accountKeys = { me: ['account', 'me'] as const, sessions: ['account', 'sessions'] as const };

export const account = {
  me: () => call(() => api.GET('/api/v1/me')),
  updateNames: (body: { firstName?: string; lastName?: string }) => call(() => api.PUT('/api/v1/me', { body })),
  changePassword: (currentPassword: string, newPassword: string) => call(() => api.POST('/api/v1/me/password', { body: { currentPassword, newPassword } })),
  changeEmail: (email: string, currentPassword: string) => call(() => api.POST('/api/v1/me/email', { body: { email, currentPassword } })),
  requestVerification: () => call(() => api.POST('/api/v1/auth/email-verification/request')),
  sessions: () => call(() => api.GET('/api/v1/me/sessions')),
  endSession: (id: string) => call(() => api.DELETE('/api/v1/me/sessions/{id}', { params: { path: { id } } })),
  endOtherSessions: () => call(() => api.DELETE('/api/v1/me/sessions')),
  signOutEverywhere: () => call(() => api.POST('/api/v1/me/sign-out-everywhere')),
  acceptInvitation: (token: string) => call(() => api.POST('/api/v1/invitations/accept', { body: { token } })),
};

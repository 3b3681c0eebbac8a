/**
 * The account page's calls for sign-ins with other identity providers (issue #40), and the link's
 * round trip: a random binding kept in sessionStorage goes with the start and again with the
 * completion, when the provider sends the browser back here with `?federation={provider}&…`.
 */
import { api, call } from '../api/client';
import type { paths } from '../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type MyIdentities = Json<paths['/api/v1/me/identities']['get']['responses'][200]>;
export type LinkedIdentity = MyIdentities['items'][number];

export const identityKeys = { mine: ['account', 'identities'] as const };
const BINDING = 'iam.federation.binding';

const randomBinding = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

export const identities = {
  mine: () => call(() => api.GET('/api/v1/me/identities')),
  unlink: (id: string) => call(() => api.DELETE('/api/v1/me/identities/{id}', { params: { path: { id } } })),
  /** Starts a link: the binding kept for the way back, the browser sent to the provider. */
  async startLink(provider: string): Promise<void> {
    const binding = randomBinding();
    sessionStorage.setItem(BINDING, binding);
    const r = await call(() => api.POST('/api/v1/me/identities/{provider}/link', { params: { path: { provider } }, body: { binding } }));
    window.location.assign(r.url);
  },
  /** The provider's answer on this page's address, if any: completed (the query then removed). */
  async completeFromLocation(): Promise<LinkedIdentity | null> {
    const url = new URL(window.location.href);
    const provider = url.searchParams.get('federation');
    if (!provider) return null;
    const binding = sessionStorage.getItem(BINDING) ?? '';
    sessionStorage.removeItem(BINDING);
    const callbackQuery = url.search;
    window.history.replaceState(null, '', `${url.pathname}${url.hash}`);
    return call(() => api.POST('/api/v1/me/identities/{provider}/complete', { params: { path: { provider } }, body: { binding, callbackQuery } }));
  },
};

/**
 * The account page's calls for sign-ins with other identity providers (issue #40), and the link's
 * round trips: first a fresh sign-in here (`prompt=login`, the re-authentication a link needs; the
 * provider to link is remembered in sessionStorage across it, for five minutes at most), then the
 * provider: a random binding kept in sessionStorage goes with the start and again with the
 * completion, when the provider sends the browser back here with `?federation={provider}&…`. That
 * answer leaves the address before the page signs in again (its `code` and `state` are the
 * provider's, not an answer of this page's own sign-in) and waits in sessionStorage meanwhile.
 */
import { api, call } from '../api/client';
import { redirectToSignIn } from '../auth/oidc';
import type { paths } from '../api/schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type MyIdentities = Json<paths['/api/v1/me/identities']['get']['responses'][200]>;
export type LinkedIdentity = MyIdentities['items'][number];

export const identityKeys = { mine: ['account', 'identities'] as const };
const BINDING = 'iam.federation.binding';
const PENDING_LINK = 'iam.federation.pending-link';
const ANSWER = 'iam.federation.answer';

/** Moves the provider's answer (`?federation=…&code=…&state=…`) from the address into this tab's storage; call before the sign-in starts. */
export function takeFederationAnswerFromAddress(): void {
  const url = new URL(window.location.href);
  if (!url.searchParams.has('federation')) return;
  sessionStorage.setItem(ANSWER, url.search);
  window.history.replaceState(null, '', `${url.pathname}${url.hash}`);
}
/** How long a link waits for its re-authentication (the server's window for a link). */
const PENDING_LINK_MS = 5 * 60_000;

const randomBinding = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

export const identities = {
  mine: () => call(() => api.GET('/api/v1/me/identities')),
  unlink: (id: string) => call(() => api.DELETE('/api/v1/me/identities/{id}', { params: { path: { id } } })),
  /** Starts a link with a re-authentication here: the provider remembered, the browser sent to the sign-in page. */
  async reauthenticateToLink(provider: string): Promise<void> {
    sessionStorage.setItem(PENDING_LINK, JSON.stringify({ provider, at: Date.now() }));
    await redirectToSignIn(`${window.location.origin}/account`, '/account', false, true);
  },
  /** The provider a link waits for, once (back from the re-authentication); null when none or too old. */
  takePendingLink(): string | null {
    const raw = sessionStorage.getItem(PENDING_LINK);
    sessionStorage.removeItem(PENDING_LINK);
    try {
      const p = JSON.parse(raw ?? 'null') as { provider?: unknown; at?: unknown } | null;
      return p && typeof p.provider === 'string' && typeof p.at === 'number' && Date.now() - p.at < PENDING_LINK_MS ? p.provider : null;
    } catch {
      return null;
    }
  },
  /** Starts a link: the binding kept for the way back, the browser sent to the provider. */
  async startLink(provider: string): Promise<void> {
    const binding = randomBinding();
    sessionStorage.setItem(BINDING, binding);
    const r = await call(() => api.POST('/api/v1/me/identities/{provider}/link', { params: { path: { provider } }, body: { binding } }));
    window.location.assign(r.url);
  },
  /** The provider's answer taken from the address (takeFederationAnswerFromAddress), if any: completed, once. */
  async completeFromLocation(): Promise<LinkedIdentity | null> {
    const callbackQuery = sessionStorage.getItem(ANSWER);
    sessionStorage.removeItem(ANSWER);
    const provider = callbackQuery ? new URLSearchParams(callbackQuery).get('federation') : null;
    if (!callbackQuery || !provider) return null;
    const binding = sessionStorage.getItem(BINDING) ?? '';
    sessionStorage.removeItem(BINDING);
    return call(() => api.POST('/api/v1/me/identities/{provider}/complete', { params: { path: { provider } }, body: { binding, callbackQuery } }));
  },
};

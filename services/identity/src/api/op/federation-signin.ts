/**
 * What a verified upstream sign-in does in the provider's interaction (the `onOutcome` of
 * federation-http.ts). Until the sign-in flow takes it as a strategy, a prove-local outcome and a
 * sign-in are answered with a page saying the sign-in cannot finish here yet.
 */
import type { ServerResponse } from 'node:http';
import type { FederationHttpDeps } from './federation-http';
import { messagePage, pageHeaders } from './pages';

export function pendingFederationOutcome(prefix: string): FederationHttpDeps['onOutcome'] {
  return async (_req, res: ServerResponse) => {
    res.writeHead(501, pageHeaders(prefix, []));
    res.end(messagePage(prefix, 'Not available yet', 'Signing in with another provider is not available here yet. Sign in with your password.'));
  };
}

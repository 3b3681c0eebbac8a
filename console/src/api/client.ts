/** The one API client: openapi-fetch over types generated from the gateway's own OpenAPI document. */
import createClient, { type Middleware } from 'openapi-fetch';
import { refreshNow, session } from '../auth/session';
import { ProblemError, isProblem } from './problem';
import type { paths } from './schema';

export const api = createClient<paths>({ baseUrl: '' });

const auth: Middleware = {
  onRequest({ request }) {
    const s = session();
    if (s && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${s.token}`);
    return request;
  },
};
api.use(auth);

function asProblem(error: unknown, status: number) {
  return isProblem(error) ? error : { type: 'about:blank', title: 'Request failed', status };
}

/**
 * Unwraps an openapi-fetch result: the data, or a ProblemError. A 401 on an authenticated call
 * (token expired or revoked) tries one refresh; a failed refresh ends the session.
 */
export async function call<T>(fn: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r = await fn();
  if (r.response.status === 401 && session() && (await refreshNow())) r = await fn();
  if (r.response.ok) return r.data as T;
  throw new ProblemError(asProblem(r.error, r.response.status));
}

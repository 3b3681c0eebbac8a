/**
 * The hosted pages' calls: the anonymous email-action routes, through openapi-fetch over the same
 * generated types as the console (no session, no bearer token).
 */
import createClient from 'openapi-fetch';
import { ProblemError, isProblem } from '../api/problem';
import type { paths } from '../api/schema';

const api = createClient<paths>({ baseUrl: '' });

async function unwrap(r: Promise<{ error?: unknown; response: Response }>): Promise<void> {
  let res;
  try {
    res = await r;
  } catch {
    throw new ProblemError({ type: 'about:blank', title: 'The server could not be reached', status: 0, detail: 'Check your connection and try again.' });
  }
  if (res.response.ok) return;
  throw new ProblemError(isProblem(res.error) ? res.error : { type: 'about:blank', title: 'Request failed', status: res.response.status });
}

/** 202 whether or not an account has the address (nothing says which). */
export const requestPasswordReset = (email: string): Promise<void> => unwrap(api.POST('/api/v1/auth/password-reset/request', { body: { email } }));

export const confirmPasswordReset = (token: string, newPassword: string): Promise<void> =>
  unwrap(api.POST('/api/v1/auth/password-reset/confirm', { body: { token, newPassword } }));

export const confirmEmailVerification = (token: string): Promise<void> => unwrap(api.POST('/api/v1/auth/email-verification/confirm', { body: { token } }));

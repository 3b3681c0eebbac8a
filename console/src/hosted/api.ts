/**
 * The hosted pages' calls: the anonymous email-action routes, through openapi-fetch over the same
 * generated types as the console (no session, no bearer token), each answered as the pages'
 * `ActionOutcome` (@iam/hosted-pages/browser): done, the link refused, a field's refusal, or a
 * problem in words.
 */
import { messages as t } from '@iam/hosted-pages';
import type { ActionOutcome } from '@iam/hosted-pages/browser';
import createClient from 'openapi-fetch';
import { type Problem, isProblem } from '../api/problem';
import type { paths } from '../api/schema';

const api = createClient<paths>({ baseUrl: '' });

/** A problem in words for these pages: too many tries, the network, or the API's title. */
function problemText(p: Problem): string {
  if (p.status === 429) return t.problems.tooMany;
  return `${p.title}${p.traceId ? ` (trace id ${p.traceId})` : ''}`;
}

/**
 * The answer to a call: a 400 of a call with a token, about the token (not a field of the form) is the link refused
 * (used, expired and never valid answer alike, 400, naming no account); a newPassword field's
 * refusal is the field's.
 */
async function outcome(r: Promise<{ error?: unknown; response: Response }>, opts: { token: boolean }): Promise<ActionOutcome> {
  let res;
  try {
    res = await r;
  } catch {
    return { ok: false, kind: 'problem', text: 'The server could not be reached. Check your connection and try again.' };
  }
  if (res.response.ok) return { ok: true };
  const p: Problem = isProblem(res.error) ? res.error : { type: 'about:blank', title: 'Request failed', status: res.response.status };
  const field = (p.errors ?? []).find((e) => /newPassword/.test(e.field));
  if (field) return { ok: false, kind: 'field', message: field.message };
  if (opts.token && p.status === 400) return { ok: false, kind: 'link-not-valid' };
  return { ok: false, kind: 'problem', text: problemText(p) };
}

/** 202 whether or not an account has the address (nothing says which). */
export const requestPasswordReset = (email: string): Promise<ActionOutcome> => outcome(api.POST('/api/v1/auth/password-reset/request', { body: { email } }), { token: false });

export const confirmPasswordReset = (token: string, newPassword: string): Promise<ActionOutcome> =>
  outcome(api.POST('/api/v1/auth/password-reset/confirm', { body: { token, newPassword } }), { token: true });

export const confirmEmailVerification = (token: string): Promise<ActionOutcome> => outcome(api.POST('/api/v1/auth/email-verification/confirm', { body: { token } }), { token: true });

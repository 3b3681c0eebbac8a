/**
 * Caps on the sizes of a request that makes the provider store a record (issue #34 item 5): an
 * authorization request (its interaction, then its code), a pushed request, a device
 * authorization. Anonymous callers choose these values; without a cap one address could write
 * gigabytes an hour (a 14 KB `nonce` per request). Checked by the library's own hook for request
 * parameters (`extraParams`), which runs on those endpoints after the client and the redirect URI
 * are known and before anything is stored, so holds whether or not the gateway is in front: too
 * long is `invalid_request`, to the client's redirect URI when it is known, else the error page.
 * services/identity/README.md lists the numbers.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';

/** The longest value of each parameter (characters). */
export const PARAM_MAX_CHARS: Readonly<Record<string, number>> = {
  state: 512,
  nonce: 512,
  // The longest email the accounts take.
  login_hint: 320,
  ui_locales: 128,
  claims_locales: 128,
  acr_values: 256,
  scope: 1_024,
  prompt: 64,
  display: 16,
  max_age: 12,
  response_type: 32,
  response_mode: 32,
  code_challenge: 128,
  code_challenge_method: 8,
  dpop_jkt: 128,
  client_id: 256,
  redirect_uri: 2_048,
  request_uri: 512,
  // Each value (a request may name several).
  resource: 1_024,
  claims: 2_048,
  id_token_hint: 4_096,
};

/** Any other parameter the provider keeps. */
export const OTHER_PARAM_MAX_CHARS = 1_024;

/** All of a request's parameters together, names included, kept or not (its decoded query or form). */
export const REQUEST_MAX_CHARS = 8_192;

const valuesOf = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.map(String) : []);

/**
 * What is too long: a message naming the parameter (or the whole request), null when nothing is.
 * `sent` is every parameter of the request, `kept` those the provider keeps.
 */
export function oversized(sent: Readonly<Record<string, unknown>>, kept: Readonly<Record<string, unknown>>): string | null {
  let total = 0;
  for (const [name, value] of Object.entries(sent)) for (const v of valuesOf(value)) total += name.length + v.length + 2;
  if (total > REQUEST_MAX_CHARS) return `the request's parameters are too long (at most ${REQUEST_MAX_CHARS} characters in all)`;
  for (const [name, value] of Object.entries(kept)) {
    const max = PARAM_MAX_CHARS[name] ?? OTHER_PARAM_MAX_CHARS;
    if (valuesOf(value).some((v) => v.length > max)) return `${name} is too long (at most ${max} characters)`;
  }
  return null;
}

/**
 * The check as the provider's `extraParams` hook: registered under `state` (a hook runs for its
 * name whether or not the request carries it), it looks at every parameter. An over-long `state`
 * is not echoed back to the client with the error.
 */
export const requestSizeParams = {
  async state(ctx: KoaContextWithOIDC): Promise<void> {
    const kept = ctx.oidc.params ?? {};
    const sent = ((ctx.method === 'POST' ? ctx.oidc.body : ctx.query) ?? {}) as Record<string, unknown>;
    const problem = oversized(sent, kept);
    if (!problem) return;
    if (valuesOf(kept.state).some((v) => v.length > PARAM_MAX_CHARS.state!)) (ctx.oidc.params as Record<string, unknown>).state = undefined;
    const { errors } = await import('oidc-provider');
    throw new errors.InvalidRequest(problem);
  },
};

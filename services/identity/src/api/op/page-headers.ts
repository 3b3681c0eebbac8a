/**
 * The headers of every hosted page identity serves (the pages themselves are React components in
 * @iam/hosted-pages, rendered to static HTML): a strict CSP (nothing but our stylesheet and
 * scripts loads, no inline script or style), never framed, no referrer, never stored.
 */

/**
 * The origin a form post's redirects may go on to, as a CSP source: `scheme://host[:port]` of an
 * http(s) URI, or the scheme of a native app's (`com.example.app:`). Nothing else: a value that
 * does not parse, or would not be one clean source expression, is left out (never a way to add
 * directives to the header).
 */
export function formTarget(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') return /^https?:\/\/[A-Za-z0-9.-]+(?::\d+)?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](?::\d+)?$/.test(u.origin) ? u.origin : undefined;
  return /^[a-z][a-z0-9+.-]*:$/.test(u.protocol) && !['javascript:', 'data:', 'blob:', 'file:', 'filesystem:'].includes(u.protocol) ? u.protocol : undefined;
}

/**
 * Headers of every page: nothing but our stylesheet and scripts load, no framing, no referrer.
 * Forms post to this origin only; `formTargets` are the URIs this interaction may end at (its
 * request's redirect URI, a logout's post-logout redirect URI, both already checked against the
 * client's registration by the provider): Chromium applies form-action to every redirect that
 * follows a form post (the sign-in → /oidc/auth/:uid → the app's redirect URI), so their origins
 * are allowed too, and no other.
 */
export function pageHeaders(_prefix: string, formTargets: readonly string[] = []): Record<string, string> {
  const targets = [...new Set(formTargets.map(formTarget).filter((t): t is string => t !== undefined))];
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // A source list takes origins, not paths ('/oidc/assets/op.css' alone is dropped as invalid,
    // which refused the stylesheet): this origin's stylesheets and scripts (the pages link only
    // ours: the stylesheet, @simplewebauthn/browser's bundle and signin.js).
    'content-security-policy': `default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action ${["'self'", ...targets].join(' ')}; base-uri 'none'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

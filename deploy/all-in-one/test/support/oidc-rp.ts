/**
 * The hosted sign-in and consent pages over plain HTTP, as a relying party's user would go
 * through them without a browser (the OIDC e2e suites' negative cases and the registry suite).
 */
import { ADMIN } from '../harness';

/** A free TCP port on the loopback (the issuer must be known before the system starts). */
export { freePort } from '@iam/platform/testing';

/** The OAuth error code of a refused openid-client call (a body error, or a WWW-Authenticate challenge for client authentication). */
export async function oauthError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const e = err as { error?: string; cause?: Array<{ parameters?: { error?: string } }> | { error?: string } };
    if (e.error) return e.error;
    if (Array.isArray(e.cause)) return e.cause[0]?.parameters?.error;
    return e.cause?.error;
  }
}

/** A JWT's payload, unverified (the tests read what a token carries). */
export const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

/**
 * The same pages over plain HTTP with a cookie jar (the negative cases need no browser): follows
 * the redirects, posts the sign-in form and allows consent; answers where it ended.
 */
export async function signInOverHttp(
  authUrl: URL,
  opts: {
    email?: string;
    password?: string;
    /** Where the RP's redirect URIs live (not followed); by default any origin but the provider's. */
    rpOrigin?: string;
    /** The user agent's cookies, kept across calls (its provider session); a fresh one by default. */
    jar?: CookieJar;
    /** false: stop at the sign-in page instead of filling it (prompt=login checks). */
    signIn?: boolean;
  } = {},
): Promise<{ url: URL; status: number; body: string }> {
  const jar = opts.jar ?? new CookieJar();
  const cookie = () => jar.header();
  let url = authUrl.href;
  let method = 'GET';
  let body: string | undefined;
  const atRp = (u: string) => (opts.rpOrigin ? u.startsWith(opts.rpOrigin) : new URL(u).origin !== authUrl.origin);
  for (let hop = 0; hop < 12; hop++) {
    if (atRp(url)) return { url: new URL(url), status: 303, body: '' };
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: cookie(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    jar.store(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const text = await res.text();
    const action = /<form\s[^>]*\baction="([^"]+)"/.exec(text)?.[1];
    if (res.status === 200 && action?.endsWith('/login') && opts.signIn !== false) {
      url = new URL(action.replace(/&amp;/g, '&'), url).href;
      method = 'POST';
      body = new URLSearchParams({ email: opts.email ?? ADMIN.email, password: opts.password ?? ADMIN.password }).toString();
      continue;
    }
    if (res.status === 200 && action?.endsWith('/consent')) {
      url = new URL(action, url).href;
      method = 'POST';
      body = 'decision=allow';
      continue;
    }
    return { url: new URL(url), status: res.status, body: text };
  }
  throw new Error('too many redirects');
}


/** A user agent's cookies: stored from responses (an expired or emptied one removed), sent back on every call. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1);
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=.*1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** fetch with these cookies, redirects not followed; the answer's cookies are kept. */
  async fetch(url: string | URL, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: this.header() } });
    this.store(res);
    return res;
  }
}

/**
 * The hosted sign-in and consent pages over plain HTTP, as a relying party's user would go
 * through them without a browser (the OIDC e2e suites' negative cases and the registry suite).
 */
import { ADMIN } from '../harness';

/**
 * The same pages over plain HTTP with a cookie jar (the negative cases need no browser): follows
 * the redirects, posts the sign-in form and allows consent; answers where it ended.
 */
export async function signInOverHttp(authUrl: URL, opts: { email?: string; password?: string; /** Where the RP's redirect URIs live (not followed). */ rpOrigin?: string } = {}): Promise<{ url: URL; status: number; body: string }> {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = authUrl.href;
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(opts.rpOrigin ?? 'http://127.0.0.1:21999/')) return { url: new URL(url), status: 303, body: '' };
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: cookie(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const text = await res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1];
    if (res.status === 200 && action?.endsWith('/login')) {
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


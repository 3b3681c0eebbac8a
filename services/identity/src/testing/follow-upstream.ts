/** Walks an upstream authorization URL as a browser would (redirects, cookies) until it comes back to `redirectUri`: the callback URL. */
export async function followToCallback(start: URL, redirectUri: string, maxHops = 12): Promise<URL> {
  const jar = new Map<string, string>();
  let next = start.href;
  for (let i = 0; i < maxHops; i++) {
    if (next.startsWith(redirectUri)) return new URL(next);
    const res = await fetch(next, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`upstream answered ${res.status} at ${next} without a redirect: ${(await res.text()).slice(0, 200)}`);
    next = new URL(location, next).href;
  }
  throw new Error('too many redirects');
}

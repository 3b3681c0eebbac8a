/**
 * A relying party's own web server on another origin than the provider (its own port on the
 * loopback; the registry takes http redirect URIs on 127.0.0.1, localhost and [::1] only): the
 * browser tests' redirects really leave the provider's pages and arrive here, so
 * the hosted pages' CSP (form-action, enforced by Chromium on every redirect after a form post)
 * is exercised as for any app, not faked by request interception.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';

export interface RpServer {
  /** `http://127.0.0.1:<port>` (another origin than the provider's port). */
  readonly origin: string;
  /** Its redirect URI (`/callback`) and post-logout redirect URI (`/signed-out`). */
  readonly callback: string;
  readonly signedOut: string;
  /** Every request it received, in order. */
  readonly requests: URL[];
  /** The next request at `path` (or one already received since the last call for that path). */
  next(path: string, timeoutMs?: number): Promise<URL>;
  close(): Promise<void>;
}

/** Starts the RP's server on `host`, a free port: its own origin. */
export async function startRpServer(host = '127.0.0.1'): Promise<RpServer> {
  const requests: URL[] = [];
  const seen = new Map<string, number>();
  const waiting: Array<{ path: string; resolve: (u: URL) => void }> = [];
  let origin = '';
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    requests.push(url);
    for (const w of waiting.filter((x) => x.path === url.pathname)) {
      waiting.splice(waiting.indexOf(w), 1);
      seen.set(url.pathname, requests.length);
      w.resolve(url);
    }
    req.resume();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The app</title></head><body><main><h1>Back at the app</h1><p>${url.pathname}</p></main></body></html>`);
  };
  const server: Server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const addr = server.address();
  origin = `http://${host}:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    origin,
    callback: `${origin}/callback`,
    signedOut: `${origin}/signed-out`,
    requests,
    next(path, timeoutMs = 15_000) {
      // One received since the last answer for this path?
      const from = seen.get(path) ?? 0;
      const already = requests.slice(from).find((u) => u.pathname === path);
      if (already) {
        seen.set(path, requests.indexOf(already, from) + 1);
        return Promise.resolve(already);
      }
      return new Promise((resolve, reject) => {
        const w = { path, resolve };
        waiting.push(w);
        setTimeout(() => {
          const i = waiting.indexOf(w);
          if (i >= 0) {
            waiting.splice(i, 1);
            reject(new Error(`the RP received no request at ${path} within ${timeoutMs} ms (received: ${requests.map((u) => u.pathname).join(', ') || 'none'})`));
          }
        }, timeoutMs).unref();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

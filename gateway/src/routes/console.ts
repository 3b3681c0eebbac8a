/**
 * The admin console (console/, a single-page app on the public REST API) at /console, same
 * origin as the API, and GraphiQL at /graphiql (GRAPHQL_IDE=true), the second entry of the same
 * Vite build. Built files (console/dist): hashed assets under /console/assets/ cached for a year
 * as immutable (the favicon among them, served with its type), index.html for /console and every
 * other /console/* path (the app routes in the browser) and graphiql.html for /graphiql, both with
 * `Cache-Control: no-store` and their own CSP. With CONSOLE_DEV_URL set, /console is proxied to
 * the Vite dev server instead (hot reload against the real API) and /graphiql redirects to its
 * page there. Anonymous: static files only.
 *
 * The hosted email-action pages, /reset-password and /verify-email (the links of the mails,
 * `{EMAIL_ACTION_BASE_URL}/reset-password?token=…`), are two more entries of the build, with
 * the Full profile (their API calls are its email-action routes). Their URL carries a live token,
 * so they are served with the strictest headers: the console's CSP with `base-uri 'none'` and
 * `form-action 'self'`, no framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`),
 * `Referrer-Policy: no-referrer` (no request they make names the page), `no-store`; the access
 * log names the route, never the query. The page reads the token and removes it from the address
 * bar at once (history.replaceState). The account page, /account, is the third: it signs in
 * through the OpenID provider (its redirect URI carries the code and state for a moment) and
 * gets the same headers.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { Logger } from '@iam/platform/core';
import type { FastifyInstance, FastifyReply } from 'fastify';

const COMMON = "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";
/** Scripts, styles and API calls from this origin only; no framing. */
export const CONSOLE_CSP = `${COMMON}; script-src 'self'; style-src 'self'`;
/**
 * GraphiQL: scripts and its editor's workers from this origin only, as the console. Its editor
 * (Monaco) writes `<style>` elements at run time, with no nonce to give them, so this page alone
 * allows inline styles (never inline scripts); its CSS embeds its fonts as data: URIs.
 */
export const GRAPHIQL_CSP = `${COMMON}; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self' data:`;

export const GRAPHIQL_PATH = '/graphiql';

/** The hosted pages (the email actions', the account page): path → built file. */
export const HOSTED_PAGES = { '/reset-password': 'reset-password.html', '/verify-email': 'verify-email.html', '/account': 'account.html' } as const;
/** A hosted page: the console's policy, no base element, forms to this origin only. */
export const HOSTED_PAGE_CSP = `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;

export interface ConsoleOptions {
  /** The built console (index.html, graphiql.html and assets/). */
  readonly dir: string;
  /** The Vite dev server to proxy to, if any. */
  readonly devUrl?: string;
  /** The console at /console (the Full profile is mounted). */
  readonly console: boolean;
  /** GraphiQL at /graphiql (GRAPHQL_IDE=true and the edge profile is mounted). */
  readonly graphiql: boolean;
  /** /reset-password and /verify-email (the Full profile is mounted). */
  readonly hostedPages: boolean;
  readonly logger: Logger;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  if (opts.devUrl) {
    // Loaded only for a dev server (CONSOLE_DEV_URL): about 200 ms of start-up otherwise (measured).
    const { default: httpProxy } = await import('@fastify/http-proxy');
    await app.register(httpProxy, { upstream: opts.devUrl, prefix: '/console', rewritePrefix: '/console', websocket: true });
    if (opts.graphiql) app.get(GRAPHIQL_PATH, { schema: { hide: true } }, (_req, reply) => reply.redirect('/console/graphiql.html'));
    if (opts.hostedPages) {
      for (const [path, file] of Object.entries(HOSTED_PAGES)) {
        app.get(path, { schema: { hide: true } }, (req, reply) => {
          const query = req.url.indexOf('?');
          return reply.header('Referrer-Policy', 'no-referrer').redirect(`/console/${file}${query < 0 ? '' : req.url.slice(query)}`);
        });
      }
    }
    opts.logger.info({ devUrl: opts.devUrl }, 'console proxied to its dev server');
    return;
  }
  const page = (file: string, csp: string, headers: Record<string, string> = {}) => {
    const path = join(opts.dir, file);
    if (!existsSync(path)) return undefined;
    return async (_req: unknown, reply: FastifyReply) =>
      reply.header('Cache-Control', 'no-store').header('Content-Security-Policy', csp).headers(headers).type('text/html; charset=utf-8').send(await readFile(path));
  };
  const hosted = opts.hostedPages
    ? Object.entries(HOSTED_PAGES).flatMap(([path, file]) => {
        const handler = page(file, HOSTED_PAGE_CSP, { 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' });
        if (!handler) opts.logger.info({ dir: opts.dir, file }, `hosted page not built (make build); ${path} is not served`);
        return handler ? [{ path, handler }] : [];
      })
    : [];
  // The OpenID provider answers the console's sign-in in its address (code, state) for a moment:
  // nothing the page loads names it.
  const consolePage = opts.console ? page('index.html', CONSOLE_CSP, { 'Referrer-Policy': 'no-referrer' }) : undefined;
  const graphiqlPage = opts.graphiql ? page('graphiql.html', GRAPHIQL_CSP) : undefined;
  if (opts.console && !consolePage) opts.logger.info({ dir: opts.dir }, 'console not built (make build); /console is not served');
  if (opts.graphiql && !graphiqlPage) opts.logger.info({ dir: opts.dir }, 'GraphiQL not built (make build); /graphiql is not served');
  if (!consolePage && !graphiqlPage && hosted.length === 0) return;
  await app.register(fastifyStatic, {
    root: join(opts.dir, 'assets'),
    prefix: '/console/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: '365d',
  });
  if (consolePage) {
    app.get('/console', { schema: { hide: true } }, consolePage);
    app.get('/console/*', { schema: { hide: true } }, consolePage);
  }
  if (graphiqlPage) app.get(GRAPHIQL_PATH, { schema: { hide: true } }, graphiqlPage);
  for (const { path, handler } of hosted) app.get(path, { schema: { hide: true } }, handler);
}

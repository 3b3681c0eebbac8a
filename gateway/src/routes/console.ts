/**
 * The admin console (console/, a single-page app on the public REST API) at /console, same
 * origin as the API, and GraphiQL at /graphiql (GRAPHQL_IDE=true), the second entry of the same
 * Vite build. Built files (console/dist): hashed assets under /console/assets/ cached for a year
 * as immutable (the favicon among them, served with its type), index.html for /console and every
 * other /console/* path (the app routes in the browser) and graphiql.html for /graphiql, both with
 * `Cache-Control: no-store` and their own CSP. With CONSOLE_DEV_URL set, /console is proxied to
 * the Vite dev server instead (hot reload against the real API) and /graphiql redirects to its
 * page there. Anonymous: static files only.
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

export interface ConsoleOptions {
  /** The built console (index.html, graphiql.html and assets/). */
  readonly dir: string;
  /** The Vite dev server to proxy to, if any. */
  readonly devUrl?: string;
  /** The console at /console (the Full profile is mounted). */
  readonly console: boolean;
  /** GraphiQL at /graphiql (GRAPHQL_IDE=true and the edge profile is mounted). */
  readonly graphiql: boolean;
  readonly logger: Logger;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  if (opts.devUrl) {
    // Loaded only for a dev server (CONSOLE_DEV_URL): about 200 ms of start-up otherwise (measured).
    const { default: httpProxy } = await import('@fastify/http-proxy');
    await app.register(httpProxy, { upstream: opts.devUrl, prefix: '/console', rewritePrefix: '/console', websocket: true });
    if (opts.graphiql) app.get(GRAPHIQL_PATH, { schema: { hide: true } }, (_req, reply) => reply.redirect('/console/graphiql.html'));
    opts.logger.info({ devUrl: opts.devUrl }, 'console proxied to its dev server');
    return;
  }
  const page = (file: string, csp: string) => {
    const path = join(opts.dir, file);
    if (!existsSync(path)) return undefined;
    return async (_req: unknown, reply: FastifyReply) =>
      reply.header('Cache-Control', 'no-store').header('Content-Security-Policy', csp).type('text/html; charset=utf-8').send(await readFile(path));
  };
  const consolePage = opts.console ? page('index.html', CONSOLE_CSP) : undefined;
  const graphiqlPage = opts.graphiql ? page('graphiql.html', GRAPHIQL_CSP) : undefined;
  if (opts.console && !consolePage) opts.logger.info({ dir: opts.dir }, 'console not built (make build); /console is not served');
  if (opts.graphiql && !graphiqlPage) opts.logger.info({ dir: opts.dir }, 'GraphiQL not built (make build); /graphiql is not served');
  if (!consolePage && !graphiqlPage) return;
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
}

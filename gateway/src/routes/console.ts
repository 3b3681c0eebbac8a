/**
 * The admin console (console/, a single-page app on the public REST API) at /console, same
 * origin as the API. Built files (console/dist): hashed assets under /console/assets/ cached for a
 * year as immutable, index.html for /console and every other /console/* path (the app routes in
 * the browser) with `Cache-Control: no-store`. With CONSOLE_DEV_URL set, /console is proxied to
 * the Vite dev server instead (hot reload against the real API). Anonymous: static files only.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { Logger } from '@iam/platform/core';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Scripts, styles and API calls from this origin only; no framing. */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

export interface ConsoleOptions {
  /** The built console (index.html and assets/). */
  readonly dir: string;
  /** The Vite dev server to proxy to, if any. */
  readonly devUrl?: string;
  readonly logger: Logger;
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  if (opts.devUrl) {
    // Loaded only for a dev server (CONSOLE_DEV_URL): about 200 ms of start-up otherwise (measured).
    const { default: httpProxy } = await import('@fastify/http-proxy');
    await app.register(httpProxy, { upstream: opts.devUrl, prefix: '/console', rewritePrefix: '/console', websocket: true });
    opts.logger.info({ devUrl: opts.devUrl }, 'console proxied to its dev server');
    return;
  }
  const index = join(opts.dir, 'index.html');
  if (!existsSync(index)) {
    opts.logger.info({ dir: opts.dir }, 'console not built (make build); /console is not served');
    return;
  }
  await app.register(fastifyStatic, {
    root: join(opts.dir, 'assets'),
    prefix: '/console/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: '365d',
  });
  const html = async (_req: unknown, reply: FastifyReply) =>
    reply.header('Cache-Control', 'no-store').header('Content-Security-Policy', CSP).type('text/html; charset=utf-8').send(await readFile(index));
  app.get('/console', { schema: { hide: true } }, html);
  app.get('/console/*', { schema: { hide: true } }, html);
}

/**
 * The provider's HTTP listener (IDENTITY_OP_PORT; only the gateway reaches it): the interaction's
 * steps (interaction.ts: one route per step of the sign-in flow), the pages' stylesheet and
 * scripts here, everything else to oidc-provider. The pages the library renders itself are
 * library-pages.ts; answers.ts refuses a request target with a control character and answers 503
 * when the database or the directory cannot serve.
 */
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { MessagePage, SIGNIN_SCRIPT_PATH, STYLESHEET_PATH, WEBAUTHN_SCRIPT_PATH, messages as t } from '@iam/hosted-pages';
import { SIGNIN_SCRIPT, renderPage } from '@iam/hosted-pages/server';
import { AppError, TIMEOUT_MS_HEADER, withQueryDeadline, withRequestContext } from '@iam/platform';
import type { Provider } from '../../infra/oidc/provider';
import { isUnavailable } from '../../infra/oidc/unavailable';
import { answerUnavailable, refusedAsNotPlain } from './answers';
import type { FederationRoutes } from './federation-http';
import { INTERACTION_STEPS, type InteractionDeps, interactionRoutes, runInteraction, sendJson } from './interaction';
import { SIGN_IN_EXPIRED } from './library-pages';
import { requestDeadline } from './request-deadline';
import { pageHeaders } from './page-headers';

/** @simplewebauthn/browser's self-contained bundle (it defines window.SimpleWebAuthnBrowser). */
const WEBAUTHN_BUNDLE = (() => {
  const entry = require.resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
})();

/** The hosted pages' one stylesheet (@iam/hosted-pages/styles.css), served at STYLESHEET_PATH. */
export const STYLESHEET = readFileSync(require.resolve('@iam/hosted-pages/styles.css'), 'utf8');

/** The provider of the moment (rebuilt when the signing keys change). */
export type CurrentProvider = () => Promise<Provider>;

/** A page that says the sign-in failed, and why. */
function failed(res: ServerResponse, prefix: string, status: number, message: string): void {
  res.writeHead(status, pageHeaders(prefix, []));
  res.end(renderPage(MessagePage, { prefix, title: t.signInErrors.title, message }));
}

export interface OpHttpDeps extends InteractionDeps {
  /** PUBLIC_URL (the issuer): the only host and scheme the provider names its endpoints by. */
  readonly publicUrl: string;
  readonly provider: CurrentProvider;
  /** Sign-ins through other identity providers (federation-http.ts): their routes come first. */
  readonly federation?: FederationRoutes;
}

/** Routes one request: the interaction's steps (interaction.ts), or the provider. */
export function opRequestHandler(d: OpHttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { prefix } = d;
  const interaction = new RegExp(`^${prefix}/interaction/([A-Za-z0-9_-]{1,64})(?:/([a-z/-]{1,32}))?$`);
  const routes = interactionRoutes(d);
  /** The step a path names, when it is an interaction's (undefined: the provider's). */
  const stepOf = (url: string | undefined): string | undefined => {
    const m = interaction.exec((url ?? '/').split('?')[0]!);
    const step = m ? (m[2] ?? '') : undefined;
    return step !== undefined && INTERACTION_STEPS.has(step) ? step : undefined;
  };
  const cannotContinue = (res: ServerResponse) => failed(res, prefix, 400, t.signInErrors.cannotContinue);

  const pinned = new URL(d.publicUrl);
  return (req, res) => {
    // Discovery, redirects and DPoP's htu name PUBLIC_URL whatever Host or X-Forwarded-Host came
    // with the request (the provider runs in proxy mode): a discovery document built from a
    // request's Host, kept by a cache, would send clients and their secrets elsewhere.
    req.headers.host = pinned.host;
    req.headers['x-forwarded-host'] = pinned.host;
    req.headers['x-forwarded-proto'] = pinned.protocol.slice(0, -1);
    // The caller's address as the gateway saw it (it replaces any X-Forwarded-For a client sent):
    // sign-in and consent events carry it, as REST logins do.
    const ip = req.headers['x-forwarded-for'];
    const ua = req.headers['user-agent'];
    const context = { clientIp: typeof ip === 'string' ? ip.split(',').pop()!.trim() : undefined, userAgent: typeof ua === 'string' ? ua : undefined };
    // The gateway's deadline bounds the request's database queries and directory calls: an
    // unreachable database is a 503 before the gateway's 504, not a hang.
    const deadline = requestDeadline(req.headers[TIMEOUT_MS_HEADER]);
    const bounded = <T>(fn: () => T): T => (deadline === undefined ? fn() : withQueryDeadline(deadline, fn));
    void bounded(() => withRequestContext(context, async () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method === 'GET' && path === prefix + STYLESHEET_PATH) {
        res.writeHead(200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' });
        res.end(STYLESHEET);
        return;
      }
      if (req.method === 'GET' && (path === prefix + WEBAUTHN_SCRIPT_PATH || path === prefix + SIGNIN_SCRIPT_PATH)) {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' });
        res.end(path === prefix + SIGNIN_SCRIPT_PATH ? SIGNIN_SCRIPT : WEBAUTHN_BUNDLE);
        return;
      }
      // A control character in the path or the query: invalid_request, before anything looks it up.
      if (refusedAsNotPlain(req, res, prefix)) return;
      const provider = await d.provider();
      if (d.federation?.handles(path)) return d.federation.handle(req, res, provider);
      const step = stepOf(path);
      if (step !== undefined) {
        if (!(await runInteraction(routes, prefix, req, res, provider, step))) cannotContinue(res);
        return;
      }
      await provider.callback()(req, res);
    })).catch((err: unknown) => {
      // A refusal of the request itself (an expired mfa token asked for its options, a factor the
      // account does not have): its 4xx, as JSON to the pages' scripts (the options steps), else a page.
      if (err instanceof AppError && err.httpStatus < 500) {
        if (res.headersSent) return void res.end();
        if (stepOf(req.url)?.endsWith('options')) return sendJson(res, err.httpStatus, { error: err.code, message: err.message });
        return failed(res, prefix, err.httpStatus, err.message);
      }
      // Its database or the directory down or late: 503, try again (a warning: it is the outage's).
      if (isUnavailable(err)) {
        d.logger.warn({ err: (err as Error).message }, 'OpenID provider page: a dependency is unavailable; answered 503');
        return answerUnavailable(res, prefix, stepOf(req.url)?.endsWith('options') === true);
      }
      const known = err instanceof Error && ['SessionNotFound', 'InvalidRequest'].includes(err.name);
      if (!known) d.logger.error({ err }, 'OpenID provider page failed');
      if (res.headersSent) return void res.end();
      failed(res, prefix, known ? 400 : 500, known ? SIGN_IN_EXPIRED : t.problems.generic);
    });
  };
}

export async function startOpServer(handler: (req: IncomingMessage, res: ServerResponse) => void, host: string, port: number): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  // Requests reach it through the gateway only; a slow client cannot hold it long.
  server.requestTimeout = 30_000;
  server.headersTimeout = 20_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : port };
}


/**
 * The provider's routes of a sign-in through another identity provider (issue #40), browser only:
 *
 *   GET {prefix}/interaction/{uid}/federation/{name}          the button: an attempt bound to this
 *                                                             interaction, then 303 to the upstream
 *   GET {prefix}/federation/{name}/callback                   the upstream's redirect URI (one per
 *                                                             provider, registered there): 303 to …
 *                                                             (a link from the account page: 303 to it)
 *   GET {prefix}/interaction/{uid}/federation/{name}/return   … under the interaction's own path,
 *                                                             where its cookie comes along: the
 *                                                             callback is checked there
 *
 * The callback cannot check the browser itself (the interaction cookie's path is the interaction's),
 * so the state starts with the interaction's uid and the browser is sent on to that interaction's
 * path; there the library reads its cookie, and the attempt must have been bound to that same
 * interaction. A state that names another interaction finds no attempt bound to it.
 *
 * What a completed upstream sign-in does next (finish the login, ask the second factor, or ask the
 * user to prove the local account) is the sign-in's: `onOutcome`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MessagePage, messages as t } from '@iam/hosted-pages';
import { renderPage } from '@iam/hosted-pages/server';
import { AppError } from '@iam/platform';
import type { FederationUseCases, UpstreamOutcome } from '../../app/federation';
import type { Provider } from '../../infra/oidc/provider';
import { pageHeaders } from './page-headers';

export type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

export interface FederationHttpDeps {
  readonly prefix: string;
  /** The account page (links started there come back to it). */
  readonly accountPath: string;
  readonly federation: Pick<FederationUseCases, 'begin' | 'complete'>;
  /** What a verified upstream sign-in does in this interaction (signed in, or the local account to prove). */
  /** The password form of "prove the local account" (POST …/interaction/{uid}/federation-link). */
  readonly proveLocal?: (req: IncomingMessage, res: ServerResponse, provider: Provider, details: InteractionDetails) => Promise<void>;
  readonly onOutcome: (req: IncomingMessage, res: ServerResponse, provider: Provider, details: InteractionDetails, outcome: Exclude<UpstreamOutcome, { kind: 'refused' } | { kind: 'linked' }>) => Promise<void>;
}

const NAME = '[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?';
const UID = '[A-Za-z0-9_-]{1,64}';

/** What the user reads for a refusal: plain words (the hosted pages' catalogue), never what the upstream said. */
export function refusalMessage(reason: string, providerName: string): { status: number; title: string; text: string } {
  const r = t.federation.refusals;
  switch (reason) {
    case 'local-email-unverified':
    case 'linking-disabled':
    case 'sign-up-disabled':
    case 'no-email':
      return { status: 403, ...r[reason](providerName) };
    case 'email-taken':
    case 'already-linked':
      return { status: 409, ...r['already-in-use'](providerName) };
    case 'unavailable':
      return { status: 503, ...r.unavailable(providerName) };
    default:
      return { status: 400, ...r.failed(providerName) };
  }
}

export type FederationRoutes = ReturnType<typeof federationRoutes>;

export function federationRoutes(d: FederationHttpDeps): { handles(path: string): boolean; handle(req: IncomingMessage, res: ServerResponse, provider: Provider): Promise<void> } {
  const start = new RegExp(`^${d.prefix}/interaction/(${UID})/federation/(${NAME})$`);
  const callback = new RegExp(`^${d.prefix}/federation/(${NAME})/callback$`);
  const back = new RegExp(`^${d.prefix}/interaction/(${UID})/federation/(${NAME})/return$`);
  const prove = new RegExp(`^${d.prefix}/interaction/(${UID})/federation-link$`);
  const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?')[0]!;
  /** A page with the sign-in pages' headers and CSP (no form of it posts anywhere else). */
  const send = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, pageHeaders(d.prefix, []));
    res.end(body);
  };

  const refused = (res: ServerResponse, reason: string, providerName: string, uid?: string) => {
    const m = refusalMessage(reason, providerName);
    // The interaction it left, while it lives, is one link away.
    const link = uid ? { href: `${d.prefix}/interaction/${uid}`, text: t.federation.backToSignIn } : undefined;
    send(res, m.status, renderPage(MessagePage, { prefix: d.prefix, title: m.title, message: m.text, link }));
  };

  return {
    handles: (path) => start.test(path) || callback.test(path) || back.test(path) || prove.test(path),

    async handle(req, res, provider) {
      const proving = prove.exec(pathOf(req));
      if (proving && req.method === 'POST' && d.proveLocal) {
        const details = await provider.interactionDetails(req, res);
        if (details.uid !== proving[1] || details.prompt.name !== 'login') return refused(res, 'state', 'the provider');
        return d.proveLocal(req, res, provider, details);
      }
      if (req.method !== 'GET') return send(res, 405, renderPage(MessagePage, { prefix: d.prefix, title: t.signInErrors.title, message: t.federation.linksOnly }));
      const path = pathOf(req);
      const url = new URL(req.url ?? '/', 'http://op.invalid');
      let m = start.exec(path);
      if (m) {
        const details = await provider.interactionDetails(req, res);
        if (details.uid !== m[1] || details.prompt.name !== 'login') return refused(res, 'state', m[2]!);
        let target: URL;
        try {
          target = await d.federation.begin(m[2]!, { purpose: 'sign-in', binding: details.uid, statePrefix: `${details.uid}.` });
        } catch (err) {
          if (err instanceof AppError && err.code === 'UNAVAILABLE') return refused(res, 'unavailable', m[2]!, details.uid);
          throw err;
        }
        res.writeHead(303, { location: target.href, 'cache-control': 'no-store' });
        return void res.end();
      }
      m = callback.exec(path);
      if (m) {
        const state = url.searchParams.get('state') ?? '';
        // A link started on the account page goes back there; the page completes it with its binding.
        if (state.startsWith('link.')) {
          const back = new URLSearchParams(url.searchParams);
          back.set('federation', m[1]!);
          res.writeHead(303, { location: `${d.accountPath}?${back.toString()}`, 'cache-control': 'no-store' });
          return void res.end();
        }
        const uid = /^([A-Za-z0-9_-]{1,64})\./.exec(state)?.[1];
        // No interaction named: nothing to send the browser on to (a forged callback). Audited as such.
        if (!uid) {
          await d.federation.complete(m[1]!, url, '');
          return refused(res, 'state', m[1]!);
        }
        res.writeHead(303, { location: `${d.prefix}/interaction/${uid}/federation/${m[1]!}/return${url.search}`, 'cache-control': 'no-store' });
        return void res.end();
      }
      m = back.exec(path);
      if (!m) return send(res, 404, renderPage(MessagePage, { prefix: d.prefix, title: t.signInErrors.notFoundTitle, message: t.signInErrors.notFound }));
      const details = await provider.interactionDetails(req, res);
      // The browser holds this interaction (its cookie): the attempt must be bound to it (complete checks).
      const binding = details.uid === m[1] && details.prompt.name === 'login' ? details.uid : '';
      const outcome = await d.federation.complete(m[2]!, url, binding);
      if (outcome.kind === 'refused') return refused(res, outcome.reason, m[2]!, details.uid);
      if (outcome.kind === 'linked') return refused(res, 'state', m[2]!, details.uid);
      return d.onOutcome(req, res, provider, details, outcome);
    },
  };
}

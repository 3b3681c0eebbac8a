/**
 * The provider's HTTP listener (IDENTITY_OP_PORT; only the gateway reaches it): the interaction
 * pages (sign-in, second factor, enrolment, consent), their stylesheet and scripts here,
 * everything else to oidc-provider. Sign-in is the REST login's password step
 * (AuthUseCases.signIn: lockout, constant-shape failure, the same audit events); an account with
 * a second factor (or one a policy or acr_values require) then gets the factor step, whose mfa
 * token stays in the interaction (server side). A passkey alone signs in too (its own endpoint).
 * The pages the library renders itself are library-pages.ts; answers.ts refuses a request target
 * with a control character and answers 503 when the database or the directory cannot serve.
 */
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { AppError, type Logger, TIMEOUT_MS_HEADER, requestContext, withQueryDeadline, withRequestContext } from '@iam/platform';
import type { AuthUseCases } from '../../app/auth';
import type { OpAudit } from '../../app/op-audit';
import { type Factor, MFA_TOKEN_INVALID, type SecondFactorUseCases } from '../../app/second-factor';
import type { PasskeyUseCases } from '../../app/passkeys';
import type { Provider } from '../../infra/oidc/provider';
import { ACR_MFA, ACR_PWD, FIRST_PARTY, OP_SCOPES, wantsMfa } from '../../infra/oidc/provider';
import { isUnavailable } from '../../infra/oidc/unavailable';
import { answerUnavailable, refusedAsNotPlain } from './answers';
import type { FederationRoutes } from './federation-http';
import { SIGN_IN_EXPIRED, stringParam } from './library-pages';
import { isPlainForm } from './plain-text';
import { requestDeadline } from './request-deadline';
import {
  SIGNIN_SCRIPT,
  SIGNIN_SCRIPT_PATH,
  STYLESHEET,
  STYLESHEET_PATH,
  WEBAUTHN_SCRIPT_PATH,
  consentPage,
  enrolPage,
  factorPage,
  messagePage,
  pageHeaders,
  signInPage,
} from './pages';

/** @simplewebauthn/browser's self-contained bundle (it defines window.SimpleWebAuthnBrowser). */
const WEBAUTHN_BUNDLE = (() => {
  const entry = require.resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
})();

/** What the interaction keeps between the password and the factor (in its server-side record). */
interface PendingFactor {
  readonly mfaToken: string;
  readonly methods: readonly string[];
  readonly enrol: boolean;
}

function pendingOf(result: unknown): PendingFactor | null {
  const p = typeof result === 'object' && result !== null ? (result as { iamFactor?: unknown }).iamFactor : undefined;
  if (typeof p !== 'object' || p === null) return null;
  const { mfaToken, methods, enrol } = p as Record<string, unknown>;
  return typeof mfaToken === 'string' && Array.isArray(methods) && typeof enrol === 'boolean' ? { mfaToken, methods: methods.map(String), enrol } : null;
}

const MAX_FORM_BYTES = 8_192;

/** The provider of the moment (rebuilt when the signing keys change). */
export type CurrentProvider = () => Promise<Provider>;

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) throw AppError.validation('A form is expected.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw AppError.validation('The form is too large.');
    chunks.push(chunk as Buffer);
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  if (!isPlainForm(form)) throw AppError.validation('The form contains control characters. Check what you typed and try again.');
  return form;
}

function send(res: ServerResponse, prefix: string, status: number, body: string, formTargets: readonly string[] = []): void {
  res.writeHead(status, pageHeaders(prefix, formTargets));
  res.end(body);
}

export interface OpHttpDeps {
  readonly prefix: string;
  /** PUBLIC_URL (the issuer): the only host and scheme the provider names its endpoints by. */
  readonly publicUrl: string;
  readonly provider: CurrentProvider;
  readonly auth: Pick<AuthUseCases, 'signIn' | 'completeSignIn' | 'passkeySignIn'>;
  readonly secondFactor: Pick<SecondFactorUseCases, 'enrolWithToken' | 'webauthnOptions' | 'passkeyEnrolmentOptions'>;
  readonly passkeys: Pick<PasskeyUseCases, 'signInOptions'>;
  /** Consent in the audit trail (sign-ins are the REST login's own events). */
  readonly audit: Pick<OpAudit, 'consentGranted'>;
  /** The live permissions among `names` with their descriptions (the consent page names what it delegates). */
  readonly permissions: (names: readonly string[]) => Promise<ReadonlyArray<{ name: string; description: string }>>;
  readonly logger: Logger;
  /** Sign-ins through other identity providers (federation-http.ts): their routes come first. */
  readonly federation?: FederationRoutes;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify(body));
}

/** A form field holding a WebAuthn credential's JSON; null when absent or not an object. */
function credentialField(form: URLSearchParams, name = 'response'): unknown {
  const raw = form.get(name) ?? '';
  if (!raw) return null;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Routes one request: the interaction pages, or the provider. */
export function opRequestHandler(d: OpHttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { prefix } = d;
  const interaction = new RegExp(`^${prefix}/interaction/([A-Za-z0-9_-]{1,64})(?:/(login|consent|factor|factor/options|factor/register-options|passkey|passkey/options))?$`);

  async function page(req: IncomingMessage, res: ServerResponse, provider: Provider, step: string | undefined): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const client = await provider.Client.find(String(details.params.client_id));
    const clientName = client?.clientName ?? String(details.params.client_id);
    const base = `${prefix}/interaction/${details.uid}`;
    const prompt = details.prompt.name;
    // Where this interaction's form posts may end up after the provider's redirects: the redirect
    // URI of its request (checked against the client's registration before any interaction), or
    // when the request named none, the client's one registered URI. A device flow's: nowhere else.
    const askedBack = stringParam(details.params.redirect_uri);
    const back = askedBack.length ? askedBack : (client?.redirectUris ?? []);
    const show = (status: number, body: string) => send(res, prefix, status, body, back);
    const signIn = (status: number, email?: string, error?: string) =>
      show(status, signInPage({ prefix, action: `${base}/login`, passkeyAction: `${base}/passkey`, clientName, email, error }));
    const pending = pendingOf(details.result);
    /** A used or expired mfa token cannot be answered again (it lives 5 minutes, the interaction 15: INTERACTION_SECONDS): back to the password. */
    const restart = async () => {
      details.result = undefined;
      await details.save(Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
      return signIn(401, undefined, 'The sign-in took too long. Sign in again.');
    };
    const expiredToken = (err: unknown): boolean => err instanceof AppError && err.code === 'UNAUTHENTICATED' && err.message === MFA_TOKEN_INVALID;
    /** The factor step's page: the enrolment (a pending TOTP secret, the same one until activated) or the factor. */
    const factor = async (f: PendingFactor, status: number, error?: string) => {
      if (f.enrol) {
        let e;
        try {
          e = await d.secondFactor.enrolWithToken(f.mfaToken);
        } catch (err) {
          if (expiredToken(err)) return restart();
          throw err;
        }
        return show(status, enrolPage({ prefix, action: `${base}/factor`, secret: e.secret, otpauthUri: e.otpauthUri, error }));
      }
      return show(status, factorPage({ prefix, action: `${base}/factor`, methods: f.methods, error }));
    };
    const finish = (accountId: string, amr: readonly string[]) =>
      provider.interactionFinished(
        req,
        res,
        { login: { accountId, amr: [...amr], acr: amr.includes('mfa') ? ACR_MFA : ACR_PWD, remember: true } },
        { mergeWithLastSubmission: false },
      );
    if (req.method === 'GET' && step === undefined) {
      if (prompt === 'login') return pending ? factor(pending, 200) : signIn(200);
      if (prompt === 'consent') {
        const requested = requestedScopes(details);
        // First-party clients (the console) are not asked.
        if (client?.[FIRST_PARTY] === true) return consent(provider, req, res, details, requested.oidc);
        // Each API permission asked (within the client's ceiling: the provider offers no other), named
        // and described (by name alone when the directory cannot answer: the name is what is granted).
        const found = requested.api.length
          ? await d.permissions(requested.api).catch((err: unknown) => (d.logger.warn({ err }, 'permission descriptions unavailable for the consent page'), []))
          : [];
        const described = new Map(found.map((p) => [p.name, p.description]));
        const apiPermissions = requested.api.map((name) => ({ name, description: described.get(name) ?? '' }));
        return show(200, consentPage({ prefix, action: `${base}/consent`, clientName, scopes: requested.oidc, apiPermissions }));
      }
      return send(res, prefix, 400, messagePage(prefix, 'Sign-in failed', 'This sign-in cannot continue. Start again from the application.'));
    }
    if (req.method === 'POST' && step === 'login' && prompt === 'login') {
      const form = await readForm(req);
      const email = (form.get('email') ?? '').slice(0, 320);
      const password = (form.get('password') ?? '').slice(0, 1_024);
      if (!email || !password) return signIn(400, email, 'Enter your email and password.');
      let verified;
      try {
        verified = await d.auth.signIn(email, password, { forceFactor: wantsMfa(details.params.acr_values) });
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return signIn(401, email, err.message);
        throw err;
      }
      if (!verified.mfa) return finish(verified.principal.userId, ['pwd']);
      // The factor step: its mfa token stays in the interaction's record, never in the page.
      const f: PendingFactor = { mfaToken: verified.mfa.mfaToken, methods: [...verified.mfa.methods], enrol: verified.mfa.enrolmentRequired };
      details.result = { iamFactor: f };
      await details.save(Math.max(1, details.exp - Math.floor(Date.now() / 1000)));
      return factor(f, 200);
    }
    if (req.method === 'POST' && step === 'factor' && prompt === 'login' && pending) {
      const form = await readForm(req);
      const code = (form.get('code') ?? '').trim();
      const recoveryCode = (form.get('recoveryCode') ?? '').trim().slice(0, 40);
      const credential = credentialField(form);
      const registration = pending.enrol ? credentialField(form, 'registration') : null;
      const f: Factor | null = registration ? { newPasskey: { name: 'Passkey', response: registration } } : credential ? { webauthn: credential } : /^[0-9]{6}$/.test(code) ? { code } : recoveryCode ? { recoveryCode } : null;
      if (!f) return factor(pending, 400, pending.enrol ? 'Enter the 6-digit code your app shows.' : 'Enter a code, or use another way.');
      let done;
      try {
        done = await d.auth.completeSignIn(pending.mfaToken, f);
      } catch (err) {
        if (expiredToken(err)) return restart();
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return factor(pending, 401, 'That did not work. Check it and try again.');
        throw err;
      }
      return finish(done.principal.userId, done.amr);
    }
    if (req.method === 'POST' && step === 'factor/options' && prompt === 'login' && pending && !pending.enrol) {
      return sendJson(res, 200, await d.secondFactor.webauthnOptions(pending.mfaToken));
    }
    if (req.method === 'POST' && step === 'factor/register-options' && prompt === 'login' && pending?.enrol) {
      return sendJson(res, 200, await d.secondFactor.passkeyEnrolmentOptions(pending.mfaToken));
    }
    if (req.method === 'POST' && step === 'passkey/options' && prompt === 'login') {
      return sendJson(res, 200, await d.passkeys.signInOptions());
    }
    if (req.method === 'POST' && step === 'passkey' && prompt === 'login') {
      const credential = credentialField(await readForm(req));
      try {
        if (!credential) throw AppError.unauthenticated('The passkey could not be verified.');
        const done = await d.auth.passkeySignIn(credential);
        return finish(done.principal.userId, done.amr);
      } catch (err) {
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return signIn(401, undefined, 'The passkey could not be verified. Try again or use your password.');
        throw err;
      }
    }
    if (req.method === 'POST' && step === 'consent' && prompt === 'consent') {
      const form = await readForm(req);
      if (form.get('decision') !== 'allow') {
        await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied access.' }, { mergeWithLastSubmission: false });
        return;
      }
      return consent(provider, req, res, details, requestedScopes(details).oidc);
    }
    return send(res, prefix, 400, messagePage(prefix, 'Sign-in failed', 'This sign-in cannot continue. Start again from the application.'));
  }

  async function consent(provider: Provider, req: IncomingMessage, res: ServerResponse, details: Awaited<ReturnType<Provider['interactionDetails']>>, scopes: readonly string[]): Promise<void> {
    const accountId = details.session?.accountId;
    const clientId = String(details.params.client_id);
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId });
    if (!grant) throw new Error('grant of the interaction not found');
    if (scopes.length) grant.addOIDCScope(scopes.join(' '));
    const missing = details.prompt.details as { missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, s] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, s.join(' '));
    const grantId = await grant.save();
    // The user is the actor of their consent (the request's IP and user agent come with it).
    if (accountId) await withRequestContext({ ...requestContext(), actor: accountId }, () => d.audit.consentGranted(accountId, clientId, [...scopes, ...Object.values(missing.missingResourceScopes ?? {}).flat()].filter((v, i, a) => a.indexOf(v) === i)));
    d.logger.info({ clientId, accountId }, 'OpenID consent granted');
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

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
      const m = interaction.exec(path);
      if (m) return page(req, res, provider, m[2]);
      await provider.callback()(req, res);
    })).catch((err: unknown) => {
      // A refusal of the request itself (an expired mfa token asked for its options, a factor the
      // account does not have): its 4xx, as JSON to the pages' scripts (the options steps), else a page.
      if (err instanceof AppError && err.httpStatus < 500) {
        if (res.headersSent) return void res.end();
        if (interaction.exec((req.url ?? '/').split('?')[0]!)?.[2]?.endsWith('options')) return sendJson(res, err.httpStatus, { error: err.code, message: err.message });
        return send(res, prefix, err.httpStatus, messagePage(prefix, 'Sign-in failed', err.message));
      }
      // Its database or the directory down or late: 503, try again (a warning: it is the outage's).
      if (isUnavailable(err)) {
        d.logger.warn({ err: (err as Error).message }, 'OpenID provider page: a dependency is unavailable; answered 503');
        return answerUnavailable(res, prefix, interaction.exec((req.url ?? '/').split('?')[0]!)?.[2]?.endsWith('options') === true);
      }
      const known = err instanceof Error && ['SessionNotFound', 'InvalidRequest'].includes(err.name);
      if (!known) d.logger.error({ err }, 'OpenID provider page failed');
      if (res.headersSent) return void res.end();
      send(
        res,
        prefix,
        known ? 400 : 500,
        messagePage(prefix, 'Sign-in failed', known ? SIGN_IN_EXPIRED : 'Something went wrong. Try again.'),
      );
    });
  };
}

const OIDC_SCOPE_SET: ReadonlySet<string> = new Set(OP_SCOPES);

/**
 * What the consent asks for: the OpenID scopes (those not granted yet, else the requested ones)
 * and the API permissions not granted yet. The latter are the provider's missing resource scopes,
 * which it offers only within the client's ceiling (provider.ts): exactly what the consent then
 * grants, so the page lists what the user gives and nothing else.
 */
function requestedScopes(details: { prompt: { details: unknown }; params: { scope?: unknown } }): { oidc: string[]; api: string[] } {
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const scope = details.params.scope;
  const oidc = missing.missingOIDCScope ?? (typeof scope === 'string' ? scope.split(' ').filter((x) => OIDC_SCOPE_SET.has(x)) : []);
  const api = [...new Set(Object.values(missing.missingResourceScopes ?? {}).flat())].filter((x) => !OIDC_SCOPE_SET.has(x));
  return { oidc, api };
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


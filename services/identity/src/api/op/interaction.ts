/**
 * The provider's interaction (oidc-provider's own example: one route per step): each step of the
 * sign-in flow (app/signin/flow.ts) is a route with a typed form (TypeBox), and the flow's state
 * lives in the interaction's server-side record, read back through its schema. The provider gets
 * the sign-in's result through `interactionFinished`. The pages are @iam/hosted-pages' React
 * components, rendered to static HTML.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ChangePasswordPage, ConsentPage, EnrolPage, FactorPage, MessagePage, type ProviderLink, SignInPage, messages as t } from '@iam/hosted-pages';
import { renderPage } from '@iam/hosted-pages/server';
import { AppError, type Logger, PASSWORD_POLICY, isPlainText, requestContext, withRequestContext } from '@iam/platform';
import type { OpAudit } from '../../app/op-audit';
import type { SessionUseCases } from '../../app/sessions';
import type { SignInFlow, StepResult } from '../../app/signin/flow';
import { NOT_A_MEMBER } from '../../app/organization-tokens';
import { isOrganizationRefusal, organizationAsked, organizationOfScope } from '../../app/signin/organization-policy';
import { acrOf } from '../../app/signin/policy';
import { type FlowState, newFlowState, readFlowState } from '../../app/signin/state';
import type { FactorInput } from '../../app/signin/strategy';
import { totpEnrolmentOf } from '../../app/signin/strategies/totp';
import type { Provider } from '../../infra/oidc/provider';
import { FIRST_PARTY, OP_SCOPES } from '../../infra/oidc/provider';
import { stringParam } from './library-pages';
import { isPlainForm } from './plain-text';
import { pageHeaders } from './page-headers';

const MAX_FORM_BYTES = 8_192;
/** Where the flow's state is kept in the interaction's record. */
export const FLOW = 'iamFlow';

export interface InteractionDeps {
  readonly prefix: string;
  readonly flow: Pick<SignInFlow, 'firstFactor' | 'secondFactor' | 'changePassword' | 'options'>;
  /** A browser sign-in the flow completed: the lockout count cleared and the success recorded. */
  readonly sessions: Pick<SessionUseCases, 'signedInAtProvider'>;
  /** Consent in the audit trail (sign-ins are the flow's own events). */
  readonly audit: Pick<OpAudit, 'consentGranted'>;
  /** The live permissions among `names` with their descriptions (the consent page names what it delegates). */
  readonly permissions: (names: readonly string[]) => Promise<ReadonlyArray<{ name: string; description: string }>>;
  readonly logger: Logger;
  /** The sign-in page's buttons of the enabled upstream identity providers (federation-http.ts), for an interaction's base path. */
  readonly providerLinks?: (base: string) => Promise<ProviderLink[]>;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** One request of one interaction, with what every step needs. */
interface Ctx {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly provider: Provider;
  readonly details: Details;
  /** The flow's state as stored (null: none yet, or not a valid one). */
  readonly state: FlowState | null;
  readonly base: string;
  readonly clientName: string;
  readonly client: Awaited<ReturnType<Provider['Client']['find']>>;
  show(status: number, body: string): void;
  json(status: number, body: unknown): void;
}

export interface Route {
  /** The prompt the interaction must be at. */
  readonly prompt: 'login' | 'consent' | 'any';
  /** The steps of the flow it answers (absent: any). */
  readonly steps?: readonly FlowState['step'][];
  run(c: Ctx): Promise<void>;
}

/** A route whose form is read and checked (TypeBox) before it runs. */
function formRoute<S extends TSchema>(r: { prompt: Route['prompt']; steps?: Route['steps']; form: S; run(c: Ctx, form: Static<S>): Promise<void> }): Route {
  return { prompt: r.prompt, ...(r.steps ? { steps: r.steps } : {}), run: async (c) => r.run(c, await readForm(c.req, r.form)) };
}

const LoginForm = Type.Object({ email: Type.Optional(Type.String()), password: Type.Optional(Type.String()) });
const FactorForm = Type.Object({ code: Type.Optional(Type.String()), recoveryCode: Type.Optional(Type.String()), response: Type.Optional(Type.String()), registration: Type.Optional(Type.String()) });
const PasskeyForm = Type.Object({ response: Type.Optional(Type.String()) });
const ConsentForm = Type.Object({ decision: Type.Optional(Type.String()) });
const PasswordForm = Type.Object({ newPassword: Type.Optional(Type.String()) });

async function readForm<S extends TSchema>(req: IncomingMessage, schema: S): Promise<Static<S>> {
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
  const body: unknown = Object.fromEntries(form);
  if (!Value.Check(schema, body)) throw AppError.validation('The form is not one this step accepts.');
  return body;
}

/** A form field holding a WebAuthn credential's JSON; undefined when absent or not an object. */
function credential(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...v } : undefined;
  } catch {
    return undefined;
  }
}

/** The factor a form answers with, as the strategy's input; null when it names none. */
function factorInput(f: Static<typeof FactorForm>, enrol: boolean): FactorInput | null {
  const registration = enrol ? credential(f.registration) : undefined;
  if (registration) return { method: 'webauthn', registration, name: 'Passkey' };
  const response = credential(f.response);
  if (response) return { method: 'webauthn', response };
  const code = (f.code ?? '').trim();
  if (/^[0-9]{6}$/.test(code)) return { method: 'totp', code };
  const recovery = (f.recoveryCode ?? '').trim().slice(0, 40);
  return recovery ? { method: 'recovery_code', code: recovery } : null;
}

/**
 * The client's `login_hint` (OpenID Connect Core §3.1.2.1), prefilled in the email field when it
 * is one plain line of an email's length (the page escapes it; it proves nothing).
 */
function loginHint(details: Details): string | undefined {
  const hint = details.params.login_hint;
  return typeof hint === 'string' && hint.length <= 320 && isPlainText(hint) ? hint.trim() || undefined : undefined;
}

const unauthenticated = (err: unknown): err is AppError => err instanceof AppError && err.code === 'UNAUTHENTICATED';
const expiredToken = (err: unknown): boolean => err instanceof AppError && err.reason === 'identity.mfa_token_invalid';

/** The interaction's routes, by `METHOD step` (the step '' is the interaction's own page). */
export function interactionRoutes(d: InteractionDeps): ReadonlyMap<string, Route> {
  const { prefix } = d;
  const remaining = (details: Details) => Math.max(1, details.exp - Math.floor(Date.now() / 1000));

  const signIn = async (c: Ctx, status: number, email?: string, error?: string) =>
    c.show(status, renderPage(SignInPage, { prefix, action: `${c.base}/login`, passkeyAction: `${c.base}/passkey`, clientName: c.clientName, email, error, providers: d.providerLinks ? await d.providerLinks(c.base) : [] }));

  /** A used or expired mfa token cannot be answered again (it lives 5 minutes, the interaction 15): back to the first step. */
  async function restart(c: Ctx): Promise<void> {
    c.details.result = undefined;
    await c.details.save(remaining(c.details));
    return signIn(c, 401, undefined, t.signInErrors.tookTooLong);
  }

  /** The pending step's page: the enrolment (a pending TOTP secret, the same one until activated), the factor, or a new password. */
  async function factor(c: Ctx, state: FlowState, status: number, error?: string): Promise<void> {
    const challenge = state.challenge;
    if (!challenge) return restart(c);
    if (state.step === 'password_change') return c.show(status, renderPage(ChangePasswordPage, { prefix, action: `${c.base}/password`, policy: PASSWORD_POLICY, error }));
    if (state.step === 'enrol') {
      let e;
      try {
        e = totpEnrolmentOf(await d.flow.options('totp', { mfaToken: challenge.mfaToken, stage: 'enrol' }));
      } catch (err) {
        if (expiredToken(err)) return restart(c);
        throw err;
      }
      return c.show(status, renderPage(EnrolPage, { prefix, action: `${c.base}/factor`, secret: e.secret, otpauthUri: e.otpauthUri, error }));
    }
    return c.show(status, renderPage(FactorPage, { prefix, action: `${c.base}/factor`, methods: challenge.methods, error }));
  }

  /** The flow is done: the success recorded, and the result handed to the provider. */
  async function finish(c: Ctx, r: StepResult): Promise<void> {
    await d.sessions.signedInAtProvider(r.principal.userId, r.emailHash);
    await c.provider.interactionFinished(c.req, c.res, { login: { accountId: r.principal.userId, amr: [...r.amr], acr: acrOf(r.amr), remember: true } }, { mergeWithLastSubmission: false });
  }

  /** After a step: done, or the next step's page (its state, with its mfa token, kept server side). */
  async function proceed(c: Ctx, r: StepResult): Promise<void> {
    if (r.state.step === 'done') return finish(c, r);
    c.details.result = { [FLOW]: r.state };
    await c.details.save(remaining(c.details));
    return factor(c, r.state, 200);
  }

  /** The first factor's step. */
  async function first(c: Ctx, input: FactorInput): Promise<void> {
    const start = newFlowState({
      clientId: String(c.details.params.client_id),
      ...(typeof c.details.params.acr_values === 'string' ? { acrValues: c.details.params.acr_values } : {}),
      organization: organizationAsked(c.details.params),
    });
    return proceed(c, await d.flow.firstFactor(start, input));
  }

  /** A request naming an organization the account is not a member of (organization-policy.ts): no session, no code, `access_denied`. */
  async function refuse(c: Ctx): Promise<void> {
    d.logger.info({ clientId: String(c.details.params.client_id) }, 'OpenID sign-in refused: not a member of the organization asked for');
    await c.provider.interactionFinished(c.req, c.res, { error: 'access_denied', error_description: NOT_A_MEMBER }, { mergeWithLastSubmission: false });
  }

  async function consent(c: Ctx, scopes: readonly string[]): Promise<void> {
    const { details, provider } = c;
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
    await provider.interactionFinished(c.req, c.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const factorSteps: FlowState['step'][] = ['second_factor', 'enrol', 'password_change'];

  return new Map<string, Route>([
    [
      'GET ',
      ({
        prompt: 'any',
        async run(c) {
          const prompt = c.details.prompt.name;
          if (prompt === 'login') return c.state && c.state.challenge && factorSteps.includes(c.state.step) ? factor(c, c.state, 200) : signIn(c, 200, loginHint(c.details));
          if (prompt !== 'consent') return c.show(400, renderPage(MessagePage, { prefix, title: t.signInErrors.title, message: t.signInErrors.cannotContinue }));
          const requested = requestedScopes(c.details);
          // First-party clients (the console) are not asked.
          if (c.client?.[FIRST_PARTY] === true) return consent(c, requested.oidc);
          // Each API permission asked (within the client's ceiling: the provider offers no other), named
          // and described (by name alone when the directory cannot answer: the name is what is granted).
          const permissionNames = requested.api.filter((x) => !organizationOfScope(x));
          const found = permissionNames.length
            ? await d.permissions(permissionNames).catch((err: unknown) => (d.logger.warn({ err }, 'permission descriptions unavailable for the consent page'), []))
            : [];
          const described = new Map(found.map((p) => [p.name, p.description]));
          // An organization asked for (organization-policy.ts) is named as what it lets the app do.
          const apiPermissions = requested.api.map((name) => ({ name, description: described.get(name) ?? (organizationOfScope(name) ? t.consent.organizationScope : '') }));
          return c.show(200, renderPage(ConsentPage, { prefix, action: `${c.base}/consent`, clientName: c.clientName, scopes: requested.oidc, apiPermissions }));
        },
      }),
    ],
    [
      'POST login',
      formRoute({
        prompt: 'login',
        form: LoginForm,
        async run(c, form) {
          const email = (form.email ?? '').slice(0, 320);
          const password = (form.password ?? '').slice(0, 1_024);
          if (!email || !password) return signIn(c, 400, email, t.signIn.missingFields);
          try {
            await first(c, { method: 'password', email, password });
          } catch (err) {
            if (isOrganizationRefusal(err)) return refuse(c);
            if (unauthenticated(err)) return signIn(c, 401, email, err.detail);
            throw err;
          }
        },
      }),
    ],
    [
      'POST factor',
      formRoute({
        prompt: 'login',
        steps: ['second_factor', 'enrol'],
        form: FactorForm,
        async run(c, form) {
          const state = c.state!;
          const enrol = state.step === 'enrol';
          const input = factorInput(form, enrol);
          if (!input) return factor(c, state, 400, enrol ? t.factor.missingEnrolCode : t.factor.missingCode);
          let done;
          try {
            done = await d.flow.secondFactor(state.challenge?.mfaToken ?? '', input);
          } catch (err) {
            if (isOrganizationRefusal(err)) return refuse(c);
            if (expiredToken(err)) return restart(c);
            if (unauthenticated(err)) return factor(c, state, 401, t.factor.refused);
            throw err;
          }
          return proceed(c, done);
        },
      }),
    ],
    [
      'POST password',
      formRoute({
        prompt: 'login',
        steps: ['password_change'],
        form: PasswordForm,
        async run(c, form) {
          const state = c.state!;
          const newPassword = (form.newPassword ?? '').slice(0, 1_024);
          if (!newPassword) return factor(c, state, 400, t.changePassword.missing);
          let done;
          try {
            done = await d.flow.changePassword(state.challenge?.mfaToken ?? '', newPassword);
          } catch (err) {
            if (isOrganizationRefusal(err)) return refuse(c);
            if (expiredToken(err)) return restart(c);
            // The policy's refusal, in the directory's words (the token stays usable).
            if (err instanceof AppError && err.code === 'VALIDATION') return factor(c, state, 400, [err.detail, ...(err.errors ?? []).map((e) => `The password ${e.message}.`)].join(' '));
            throw err;
          }
          return proceed(c, done);
        },
      }),
    ],
    ['POST factor/options', ({ prompt: 'login', steps: ['second_factor'], run: async (c) => c.json(200, await d.flow.options('webauthn', { mfaToken: c.state!.challenge?.mfaToken ?? '', stage: 'second' })) })],
    ['POST factor/register-options', ({ prompt: 'login', steps: ['enrol'], run: async (c) => c.json(200, await d.flow.options('webauthn', { mfaToken: c.state!.challenge?.mfaToken ?? '', stage: 'enrol' })) })],
    ['POST passkey/options', ({ prompt: 'login', run: async (c) => c.json(200, await d.flow.options('webauthn')) })],
    [
      'POST passkey',
      formRoute({
        prompt: 'login',
        form: PasskeyForm,
        async run(c, form) {
          const response = credential(form.response);
          try {
            if (!response) throw AppError.unauthenticated('The passkey could not be verified.');
            await first(c, { method: 'webauthn', response });
          } catch (err) {
            if (isOrganizationRefusal(err)) return refuse(c);
            if (unauthenticated(err)) return signIn(c, 401, undefined, t.signIn.passkeyNotVerified);
            throw err;
          }
        },
      }),
    ],
    [
      'POST consent',
      formRoute({
        prompt: 'consent',
        form: ConsentForm,
        async run(c, form) {
          if (form.decision !== 'allow') {
            await c.provider.interactionFinished(c.req, c.res, { error: 'access_denied', error_description: 'The user denied access.' }, { mergeWithLastSubmission: false });
            return;
          }
          return consent(c, requestedScopes(c.details).oidc);
        },
      }),
    ],
  ]);
}

/** The steps an interaction's path may name (others are the provider's). */
export const INTERACTION_STEPS: ReadonlySet<string> = new Set(['', 'login', 'consent', 'factor', 'factor/options', 'factor/register-options', 'password', 'passkey', 'passkey/options']);

/** Runs the route of `step` for one request of an interaction; false when none answers it now (the caller's 400). */
export async function runInteraction(routes: ReadonlyMap<string, Route>, prefix: string, req: IncomingMessage, res: ServerResponse, provider: Provider, step: string): Promise<boolean> {
  const details = await provider.interactionDetails(req, res);
  const r = routes.get(`${req.method ?? ''} ${step}`);
  const state = readFlowState(details.result?.[FLOW]);
  if (!r || (r.prompt !== 'any' && details.prompt.name !== r.prompt)) return false;
  if (r.steps && !(state && r.steps.includes(state.step))) return false;
  const client = await provider.Client.find(String(details.params.client_id));
  // Where this interaction's form posts may end up after the provider's redirects: the redirect
  // URI of its request (checked against the client's registration before any interaction), or
  // when the request named none, the client's one registered URI. A device flow's: nowhere else.
  const askedBack = stringParam(details.params.redirect_uri);
  const back = askedBack.length ? askedBack : (client?.redirectUris ?? []);
  const c: Ctx = {
    req,
    res,
    provider,
    details,
    state,
    client,
    base: `${prefix}/interaction/${details.uid}`,
    clientName: client?.clientName ?? String(details.params.client_id),
    show: (status, body) => {
      res.writeHead(status, pageHeaders(prefix, back));
      res.end(body);
    },
    json: (status, body) => sendJson(res, status, body),
  };
  await r.run(c);
  return true;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify(body));
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

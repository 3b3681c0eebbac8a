/**
 * What a verified upstream sign-in does in the provider's interaction (the `onOutcome` of
 * federation-http.ts), through the one sign-in flow: the upstream strategy's first factor (a
 * ticket; app/signin/strategies/upstream.ts), then whatever the flow's policy says: done (the
 * success recorded, the result handed to the provider), or the second factor or enrolment, whose
 * page the interaction's own route shows from the state kept here.
 *
 * "Prove the local account" keeps the link waiting in the interaction and asks the account's
 * password (federation-link form); a sign-in as that very account links it, then goes on as any
 * sign-in. A password of another account links nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MessagePage, ProveAccountPage, messages as t } from '@iam/hosted-pages';
import { renderPage } from '@iam/hosted-pages/server';
import { AppError } from '@iam/platform';
import type { FederationUseCases, PendingLink } from '../../app/federation';
import type { SessionUseCases } from '../../app/sessions';
import type { SignInFlow, StepResult } from '../../app/signin/flow';
import { NOT_A_MEMBER } from '../../app/organization-tokens';
import { isOrganizationRefusal, organizationAsked } from '../../app/signin/organization-policy';
import { acrOf } from '../../app/signin/policy';
import { newFlowState } from '../../app/signin/state';
import type { UpstreamTickets } from '../../app/signin/strategies/upstream';
import type { Provider } from '../../infra/oidc/provider';
import type { FederationHttpDeps, InteractionDetails } from './federation-http';
import { FLOW } from './interaction';
import { stringParam } from './library-pages';
import { pageHeaders } from './page-headers';

const PENDING = 'iamFederationLink';
const MAX_FORM_BYTES = 8_192;

const PendingSchema = Type.Object({ providerId: Type.String(), issuer: Type.String(), subject: Type.String(), email: Type.String(), userId: Type.String(), providerName: Type.String() });

export interface FederationSignInDeps {
  readonly prefix: string;
  readonly flow: Pick<SignInFlow, 'firstFactor'>;
  readonly sessions: Pick<SessionUseCases, 'signedInAtProvider'>;
  readonly tickets: UpstreamTickets;
  readonly federation: Pick<FederationUseCases, 'linkAfterProof'>;
}

const remaining = (details: InteractionDetails) => Math.max(1, details.exp - Math.floor(Date.now() / 1000));
const startOf = (details: InteractionDetails) =>
  newFlowState({
    clientId: String(details.params.client_id),
    ...(typeof details.params.acr_values === 'string' ? { acrValues: details.params.acr_values } : {}),
    organization: organizationAsked(details.params),
  });
/** A request naming an organization the account is not a member of (organization-policy.ts): no session, no code. */
const refuse = (req: IncomingMessage, res: ServerResponse, provider: Provider) =>
  provider.interactionFinished(req, res, { error: 'access_denied', error_description: NOT_A_MEMBER }, { mergeWithLastSubmission: false });

/** The page asking for the local account's password before linking (no secret in it). */
const provePage = (prefix: string, action: string, providerName: string, error?: string): string => renderPage(ProveAccountPage, { prefix, action, providerName, error });

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw AppError.validation('The form is too large.');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export function federationSignIn(d: FederationSignInDeps): { onOutcome: FederationHttpDeps['onOutcome']; proveLocal: NonNullable<FederationHttpDeps['proveLocal']> } {
  const show = (res: ServerResponse, status: number, body: string, formTargets: readonly string[] = []) => {
    res.writeHead(status, pageHeaders(d.prefix, formTargets));
    res.end(body);
  };
  /** Where the prove form's post may end up after the provider's redirects (as the interaction's own pages allow). */
  const backOf = async (provider: Provider, details: InteractionDetails): Promise<readonly string[]> => {
    const asked = stringParam(details.params.redirect_uri);
    if (asked.length) return asked;
    return (await provider.Client.find(String(details.params.client_id)))?.redirectUris ?? [];
  };

  /** After the flow's first factor: finish, or keep its state and let the interaction's page ask the factor. */
  async function after(req: IncomingMessage, res: ServerResponse, provider: Provider, details: InteractionDetails, r: StepResult): Promise<void> {
    if (r.state.step === 'done') {
      await d.sessions.signedInAtProvider(r.principal.userId, r.emailHash);
      await provider.interactionFinished(req, res, { login: { accountId: r.principal.userId, amr: [...r.amr], acr: acrOf(r.amr), remember: true } }, { mergeWithLastSubmission: false });
      return;
    }
    details.result = { [FLOW]: r.state };
    await details.save(remaining(details));
    res.writeHead(303, { location: `${d.prefix}/interaction/${details.uid}`, 'cache-control': 'no-store' });
    res.end();
  }

  return {
    async onOutcome(req, res, provider, details, outcome) {
      if (outcome.kind === 'prove-local') {
        details.result = { [PENDING]: { ...outcome.pending, providerName: outcome.providerName } };
        await details.save(remaining(details));
        return show(res, 200, provePage(d.prefix, `${d.prefix}/interaction/${details.uid}/federation-link`, outcome.providerName), await backOf(provider, details));
      }
      const ticket = d.tickets.issue(outcome.userId, outcome.amr);
      let r: StepResult;
      try {
        r = await d.flow.firstFactor(startOf(details), { method: 'upstream', ticket });
      } catch (err) {
        if (isOrganizationRefusal(err)) return refuse(req, res, provider);
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return show(res, 401, renderPage(MessagePage, { prefix: d.prefix, title: t.signInErrors.title, message: t.federation.notCompleted }));
        throw err;
      }
      return after(req, res, provider, details, r);
    },

    async proveLocal(req, res, provider, details) {
      const raw: unknown = details.result?.[PENDING];
      if (!Value.Check(PendingSchema, raw)) return show(res, 400, renderPage(MessagePage, { prefix: d.prefix, title: t.signInErrors.title, message: t.signInErrors.cannotContinue }));
      const pending: PendingLink & { providerName: string } = raw;
      const form = await readForm(req);
      const email = (form.get('email') ?? '').slice(0, 320);
      const password = (form.get('password') ?? '').slice(0, 1_024);
      const action = `${d.prefix}/interaction/${details.uid}/federation-link`;
      const back = await backOf(provider, details);
      if (!email || !password) return show(res, 400, provePage(d.prefix, action, pending.providerName, t.signIn.missingFields), back);
      let r: StepResult;
      try {
        r = await d.flow.firstFactor(startOf(details), { method: 'password', email, password });
      } catch (err) {
        if (isOrganizationRefusal(err)) return refuse(req, res, provider);
        if (err instanceof AppError && err.code === 'UNAUTHENTICATED') return show(res, 401, provePage(d.prefix, action, pending.providerName, err.message), back);
        throw err;
      }
      // Only the account the upstream identity matched gets it; another account's password links nothing.
      if (r.principal.userId !== pending.userId) return show(res, 403, renderPage(MessagePage, { prefix: d.prefix, title: t.federation.notConnectedTitle, message: t.federation.notThatAccount(pending.providerName) }));
      await d.federation.linkAfterProof(pending, r.principal.userId);
      return after(req, res, provider, details, r);
    },
  };
}

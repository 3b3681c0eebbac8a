/**
 * gRPC handlers of LinkedIdentityService (issue #40 item 3): the account page's linked identities
 * (list, link another, unlink) and an administrator's view of a user's. The account's own calls
 * carry its bearer token: first-party only, and linking or unlinking needs a sign-in within 5
 * minutes (account-access.ts), as a factor change does; the link's completion only first party
 * (its start checked the sign-in; the upstream's pages may take longer than the window).
 */
import { identityProvidersV1 } from '@iam/contracts';
import { AppError, type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { AccountAccess } from '../app/account-access';
import type { FederationUseCases, LinkedIdentityView } from '../app/federation';
import type { AccessClaims } from '../domain/model';

const identityOut = (l: LinkedIdentityView): identityProvidersV1.LinkedIdentity => ({
  id: l.id,
  providerId: l.providerId,
  providerName: l.providerName,
  providerDisplayName: l.providerDisplayName,
  issuer: l.issuer,
  subject: l.subject,
  email: l.email,
  createdAt: l.createdAt,
  lastUsedAt: l.lastUsedAt ?? undefined,
});

/** What a refused link says to the account page (a 4xx with the reason; never the upstream's words). */
function linkRefused(reason: string): AppError {
  if (reason === 'already-linked') return new AppError('CONFLICT', 'That account at the provider is already linked to an account here.', { reason: 'identity.upstream_already_linked' });
  if (reason === 'unavailable') return AppError.unavailable('The identity provider cannot be reached; try again shortly.');
  return new AppError('VALIDATION', 'The sign-in with the identity provider could not be completed. Start again.', { reason: 'identity.upstream_refused', errors: [{ field: 'callbackQuery', message: reason }] });
}

export function linkedIdentitiesGrpc(
  deps: { federation: FederationUseCases; access: AccountAccess; validate: (accessToken: string) => Promise<AccessClaims>; administers: (userId: string) => Promise<void> },
  h: HandlerDeps,
): ServiceBinding[] {
  const { federation, access } = deps;
  const firstParty = async (token: string) => {
    const c = await deps.validate(token);
    await access.firstParty(c);
    return c;
  };
  const recent = async (token: string) => {
    const c = await deps.validate(token);
    await access.factorChange(c);
    return c;
  };
  return [
    bindService(
      identityProvidersV1.LinkedIdentityServiceService,
      {
        listMyIdentities: async (r) => {
          const c = await firstParty(r.accessToken);
          const [identities, providers] = await Promise.all([federation.listOf(c.sub), federation.buttons()]);
          return { identities: identities.map(identityOut), providers: providers.map((p) => ({ ...p })) };
        },
        startLink: async (r) => {
          const c = await recent(r.accessToken);
          if (r.binding.length < 16 || r.binding.length > 200) throw AppError.validation('The binding is not valid.', [{ field: 'binding', message: 'must be 16 to 200 characters' }]);
          const url = await federation.begin(r.providerName, { purpose: 'link', binding: `account:${c.sub}:${r.binding}`, userId: c.sub, statePrefix: 'link.' });
          return { url: url.href };
        },
        completeLink: async (r) => {
          const c = await firstParty(r.accessToken);
          const query = r.callbackQuery.startsWith('?') ? r.callbackQuery : `?${r.callbackQuery}`;
          const outcome = await federation.complete(r.providerName, new URL(`http://account.invalid/${query}`), `account:${c.sub}:${r.binding}`);
          if (outcome.kind !== 'linked' || outcome.userId !== c.sub) throw linkRefused(outcome.kind === 'refused' ? outcome.reason : 'state');
          const linked = (await federation.listOf(c.sub)).at(-1);
          if (!linked) throw AppError.notFound('The linked identity does not exist.');
          return identityOut(linked);
        },
        unlinkMyIdentity: async (r) => {
          const c = await recent(r.accessToken);
          await federation.unlink(c.sub, r.identityId, { userId: c.sub, administrator: false });
          return {};
        },
        listUserIdentities: async (r) => {
          await deps.administers(r.userId);
          return { identities: (await federation.listOf(r.userId)).map(identityOut) };
        },
        unlinkUserIdentity: async (r, ctx) => {
          const actor = actorOf(ctx);
          if (!actor) throw AppError.forbidden('The call does not name the user it acts for.');
          await deps.administers(r.userId);
          await federation.unlink(r.userId, r.identityId, { userId: actor, administrator: true });
          return {};
        },
      },
      h,
      ['gateway'],
    ),
  ];
}

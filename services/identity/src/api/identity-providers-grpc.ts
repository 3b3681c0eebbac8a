/** gRPC handlers of IdentityProviderService: proto in, the provider use cases, proto out. No rules live here. */
import { identityProvidersV1 } from '@iam/contracts';
import { AppError, type CallContext, type FieldError, type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { IdentityProviderUseCases, ProviderActor } from '../app/identity-providers';
import type { ClaimMapping, IdentityProviderListQuery, IdentityProviderRecord } from '../domain/identity-providers';

const PAGE_MAX = 2_147_483_647;
const Q_MAX_LENGTH = 200;

const toProvider = (p: IdentityProviderRecord): identityProvidersV1.IdentityProvider => ({
  id: p.id,
  kind: p.kind,
  name: p.name,
  displayName: p.displayName,
  discoveryUrl: p.discoveryUrl ?? '',
  clientId: p.clientId,
  hasClientSecret: p.hasClientSecret,
  scopes: [...p.scopes],
  claimMapping: { ...p.claimMapping, subject: [...p.claimMapping.subject] },
  trustEmailVerified: p.trustEmailVerified,
  trustUpstreamMfa: p.trustUpstreamMfa,
  allowSignUp: p.allowSignUp,
  linking: p.linking,
  defaultRoles: [...p.defaultRoles],
  iconUrl: p.iconUrl,
  enabled: p.enabled,
  createdAt: p.createdAt,
  updatedAt: p.updatedAt,
  deletedAt: p.deletedAt ?? undefined,
});

/** A mapping as given: empty fields keep the defaults. */
const mappingOf = (m: identityProvidersV1.ClaimMapping | undefined): Partial<ClaimMapping> | null =>
  m ? { ...(m.subject.length > 0 ? { subject: m.subject } : {}), email: m.email, emailVerified: m.emailVerified, givenName: m.givenName, familyName: m.familyName } : null;

function actor(ctx: CallContext): ProviderActor {
  const userId = actorOf(ctx);
  if (!userId) throw AppError.forbidden('The call does not name the user it acts for.');
  return { userId };
}

function listQuery(r: identityProvidersV1.ListIdentityProvidersRequest): IdentityProviderListQuery {
  const errors: FieldError[] = [];
  if (!Number.isInteger(r.page) || r.page < 1 || r.page > PAGE_MAX) errors.push({ field: 'page', message: `must be an integer from 1 to ${PAGE_MAX}` });
  if (!Number.isInteger(r.pageSize) || r.pageSize < 1 || r.pageSize > 100) errors.push({ field: 'pageSize', message: 'must be an integer from 1 to 100' });
  if (r.q.length > Q_MAX_LENGTH) errors.push({ field: 'q', message: `must be at most ${Q_MAX_LENGTH} characters` });
  if (r.q.includes('\u0000')) errors.push({ field: 'q', message: 'must not contain NUL characters' });
  if (errors.length > 0) throw AppError.validation('The paging or search parameters are not valid.', errors);
  return { page: r.page, pageSize: r.pageSize, q: r.q.trim(), includeDeleted: r.includeDeleted };
}

export function identityProvidersGrpc(uc: IdentityProviderUseCases, h: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      identityProvidersV1.IdentityProviderServiceService,
      {
        listIdentityProviders: async (r) => {
          const page = await uc.list(listQuery(r));
          return { items: page.items.map(toProvider), totalCount: page.totalCount };
        },
        getIdentityProvider: async (r) => toProvider(await uc.get(r.id, { includeDeleted: r.includeDeleted })),
        createIdentityProvider: async (r, ctx) =>
          toProvider(await uc.create(actor(ctx), { ...r, discoveryUrl: r.discoveryUrl || null, claimMapping: mappingOf(r.claimMapping) })),
        updateIdentityProvider: async (r, ctx) =>
          toProvider(
            await uc.update(actor(ctx), r.id, {
              kind: r.kind,
              name: r.name,
              displayName: r.displayName,
              discoveryUrl: r.discoveryUrl === undefined ? undefined : r.discoveryUrl || null,
              clientId: r.clientId,
              clientSecret: r.clientSecret,
              scopes: r.scopes?.values,
              claimMapping: r.claimMapping ? mappingOf(r.claimMapping) : undefined,
              trustEmailVerified: r.trustEmailVerified,
              trustUpstreamMfa: r.trustUpstreamMfa,
              allowSignUp: r.allowSignUp,
              linking: r.linking,
              defaultRoles: r.defaultRoles?.values,
              iconUrl: r.iconUrl,
              enabled: r.enabled,
            }),
          ),
        deleteIdentityProvider: async (r, ctx) => (await uc.remove(actor(ctx), r.id), {}),
      },
      h,
      // The providers API is the gateway's, acting for the user its request verified.
      ['gateway'],
    ),
  ];
}

/** gRPC handlers of ClientService: proto in, the client use cases, proto out. No rules live here. */
import { identityClientsV1 } from '@iam/contracts';
import { AppError, type CallContext, type FieldError, type HandlerDeps, type ServiceBinding, actorOf, bindService } from '@iam/platform';
import type { ClientActor, ClientUseCases, ClientWithSecret } from '../app/clients';
import { type ClientListQuery, type ClientRecord, DEFAULT_ID_TOKEN_ALG } from '../domain/clients';

/** As the directory's collections: pages up to this number, search text up to this length. */
const PAGE_MAX = 2_147_483_647;
const Q_MAX_LENGTH = 200;

const toClient = (c: ClientRecord): identityClientsV1.OAuthClient => ({
  clientId: c.clientId,
  name: c.name,
  type: c.type,
  redirectUris: [...c.redirectUris],
  postLogoutRedirectUris: [...c.postLogoutRedirectUris],
  grantTypes: [...c.grantTypes],
  roles: [...c.roles],
  requirePar: c.requirePar,
  dpopBound: c.dpopBound,
  apiPermissions: [...c.apiPermissions],
  idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
  userinfoSignedResponseAlg: c.userinfoSignedResponseAlg ?? '',
  resourceServer: c.resourceServer,
  firstParty: c.firstParty,
  builtIn: c.builtIn,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
  deletedAt: c.deletedAt ?? undefined,
});

const withSecret = (r: ClientWithSecret): identityClientsV1.ClientWithSecret => ({ client: toClient(r.client), clientSecret: r.clientSecret ?? '' });

/** The end user a write acts for; a write that names none is refused (never treated as privileged). */
function actor(ctx: CallContext): ClientActor {
  const userId = actorOf(ctx);
  if (!userId) throw AppError.forbidden('The call does not name the user it acts for.');
  return { userId };
}

function listQuery(r: identityClientsV1.ListClientsRequest): ClientListQuery {
  const errors: FieldError[] = [];
  if (!Number.isInteger(r.page) || r.page < 1 || r.page > PAGE_MAX) errors.push({ field: 'page', message: `must be an integer from 1 to ${PAGE_MAX}` });
  if (!Number.isInteger(r.pageSize) || r.pageSize < 1 || r.pageSize > 100) errors.push({ field: 'pageSize', message: 'must be an integer from 1 to 100' });
  if (r.q.length > Q_MAX_LENGTH) errors.push({ field: 'q', message: `must be at most ${Q_MAX_LENGTH} characters` });
  if (r.q.includes('\u0000')) errors.push({ field: 'q', message: 'must not contain NUL characters' });
  if (errors.length > 0) throw AppError.validation('The paging or search parameters are not valid.', errors);
  return { page: r.page, pageSize: r.pageSize, q: r.q.trim(), includeDeleted: r.includeDeleted };
}

export function clientsGrpc(uc: ClientUseCases, h: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      identityClientsV1.ClientServiceService,
      {
        listClients: async (r) => {
          const page = await uc.list(listQuery(r));
          return { items: page.items.map(toClient), totalCount: page.totalCount };
        },
        getClient: async (r) => toClient(await uc.get(r.clientId, { includeDeleted: r.includeDeleted })),
        createClient: async (r, ctx) =>
          withSecret(await uc.create(actor(ctx), { ...r, idTokenSignedResponseAlg: r.idTokenSignedResponseAlg || DEFAULT_ID_TOKEN_ALG, userinfoSignedResponseAlg: r.userinfoSignedResponseAlg || null })),
        updateClient: async (r, ctx) =>
          withSecret(
            await uc.update(actor(ctx), r.clientId, {
              name: r.name,
              type: r.type,
              redirectUris: r.redirectUris?.values,
              postLogoutRedirectUris: r.postLogoutRedirectUris?.values,
              grantTypes: r.grantTypes?.values,
              roles: r.roles?.values,
              requirePar: r.requirePar,
              dpopBound: r.dpopBound,
              apiPermissions: r.apiPermissions?.values,
              idTokenSignedResponseAlg: r.idTokenSignedResponseAlg,
              // "" takes the signing away (plain JSON).
              userinfoSignedResponseAlg: r.userinfoSignedResponseAlg === undefined ? undefined : r.userinfoSignedResponseAlg || null,
              resourceServer: r.resourceServer,
            }),
          ),
        deleteClient: async (r, ctx) => (await uc.remove(actor(ctx), r.clientId), {}),
        rotateClientSecret: async (r, ctx) => withSecret(await uc.rotateSecret(actor(ctx), r.clientId)),
      },
      h,
      // The clients API is the gateway's, acting for the user its request verified.
      ['gateway'],
    ),
  ];
}

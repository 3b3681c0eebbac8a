/**
 * The OAuth clients API (DESIGN §5 "Clients", Full profile; registered inside
 * `requiring('clients.manage', ...)`): the collection rules of DESIGN §2, plus
 * `POST /api/v1/clients/{id}/secret`. Identity owns the registry and decides (validation,
 * escalation, built-ins read only); the gateway maps shapes only. Responses are no-store (the
 * authenticated context's rule), which matters most for the answers carrying a secret.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityClientsV1 } from '@iam/contracts';
import { ClientIdParams, ClientQuery, CreateClientBody, OAuthClient, OAuthClientWithSecret, SIGNING_ALGS, UpdateClientBody } from '../schemas/clients';
import { Envelope, PAGE_DEFAULT, PAGE_SIZE_DEFAULT, envelope, problems } from '../schemas/common';
import type { Upstreams } from '../upstreams';

const PATH = '/api/v1/clients';

function typeOf(t: string): 'public' | 'confidential' {
  if (t === 'public' || t === 'confidential') return t;
  throw new Error(`unknown client type "${t}"`);
}

function signingAlg(a: string): (typeof SIGNING_ALGS)[number] {
  const known = SIGNING_ALGS.find((x) => x === a);
  if (!known) throw new Error(`unknown signing algorithm "${a}"`);
  return known;
}

function clientJson(c: identityClientsV1.OAuthClient | undefined) {
  if (!c) throw new Error('identity answered no client');
  return {
    clientId: c.clientId,
    name: c.name,
    type: typeOf(c.type),
    redirectUris: c.redirectUris,
    postLogoutRedirectUris: c.postLogoutRedirectUris,
    grantTypes: c.grantTypes,
    roles: c.roles,
    requirePar: c.requirePar,
    dpopBound: c.dpopBound,
    apiPermissions: c.apiPermissions,
    idTokenSignedResponseAlg: signingAlg(c.idTokenSignedResponseAlg),
    userinfoSignedResponseAlg: c.userinfoSignedResponseAlg ? signingAlg(c.userinfoSignedResponseAlg) : null,
    resourceServer: c.resourceServer,
    firstParty: c.firstParty,
    builtIn: c.builtIn,
    createdAt: c.createdAt!,
    updatedAt: c.updatedAt!,
    deletedAt: c.deletedAt ?? null,
  };
}

const withSecret = (r: identityClientsV1.ClientWithSecret) => ({ ...clientJson(r.client), ...(r.clientSecret ? { clientSecret: r.clientSecret } : {}) });
const list = (xs: readonly string[] | undefined) => (xs === undefined ? undefined : { values: [...xs] });

export interface ClientRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'clients'>;
}

export const clientRoutes: FastifyPluginAsyncTypebox<ClientRoutesOptions> = async (app, { upstreams }) => {
  const u = upstreams.clients;
  const tags = ['clients'];
  // Offset pages only (a registry of apps, not of users): no keyset cursor; the count is exact.
  const page = Envelope(OAuthClient, { exactFlag: true, cursor: false });

  app.get(
    PATH,
    {
      schema: {
        tags,
        summary: 'List OAuth clients (paged, searchable; the built-in iam-console first), or fetch one with ?id=',
        querystring: ClientQuery,
        response: { 200: { anyOf: [page, OAuthClient] }, ...problems(400, 404) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      if (q.id !== undefined) {
        const one = clientJson(await u.getClient({ clientId: q.id, includeDeleted: q.includeDeleted === true }));
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(OAuthClient, '200')).send(one);
      }
      const args = { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT, q: q.q ?? '', includeDeleted: q.includeDeleted ?? false };
      const r = await u.listClients(args);
      return envelope(r.items.map(clientJson), args.page, args.pageSize, r.totalCount, { totalCountExact: true });
    },
  );

  app.get(
    `${PATH}/:id`,
    { schema: { tags, summary: 'Get one OAuth client', params: ClientIdParams, response: { 200: OAuthClient, ...problems(400, 404) } } },
    async (req) => clientJson(await u.getClient({ clientId: req.params.id, includeDeleted: false })),
  );

  app.post(
    PATH,
    {
      schema: {
        tags,
        summary: 'Register an OAuth client; a confidential client gets its clientSecret in this answer only',
        body: CreateClientBody,
        response: { 201: OAuthClientWithSecret, ...problems(400, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const created = withSecret(
        await u.createClient({
          name: b.name,
          type: b.type,
          redirectUris: b.redirectUris ?? [],
          postLogoutRedirectUris: b.postLogoutRedirectUris ?? [],
          grantTypes: b.grantTypes,
          roles: b.roles ?? [],
          requirePar: b.requirePar ?? false,
          dpopBound: b.dpopBound ?? false,
          apiPermissions: b.apiPermissions ?? [],
          idTokenSignedResponseAlg: b.idTokenSignedResponseAlg ?? '',
          userinfoSignedResponseAlg: b.userinfoSignedResponseAlg ?? '',
          resourceServer: b.resourceServer ?? false,
        }),
      );
      return reply.code(201).header('location', `${PATH}/${created.clientId}`).send(created);
    },
  );

  app.put(
    `${PATH}/:id`,
    {
      schema: {
        tags,
        summary: 'Update an OAuth client: fields given replace, fields absent stay (a public client made confidential gets its clientSecret in this answer)',
        params: ClientIdParams,
        body: UpdateClientBody,
        response: { 200: OAuthClientWithSecret, ...problems(400, 404, 409, 413, 415) },
      },
    },
    async (req) => {
      const b = req.body;
      return withSecret(
        await u.updateClient({
          clientId: req.params.id,
          name: b.name,
          type: b.type,
          redirectUris: list(b.redirectUris),
          postLogoutRedirectUris: list(b.postLogoutRedirectUris),
          grantTypes: list(b.grantTypes),
          roles: list(b.roles),
          requirePar: b.requirePar,
          dpopBound: b.dpopBound,
          apiPermissions: list(b.apiPermissions),
          idTokenSignedResponseAlg: b.idTokenSignedResponseAlg,
          // null takes the signing away: "" on the wire.
          userinfoSignedResponseAlg: b.userinfoSignedResponseAlg === undefined ? undefined : (b.userinfoSignedResponseAlg ?? ''),
          resourceServer: b.resourceServer,
        }),
      );
    },
  );

  app.delete(
    `${PATH}/:id`,
    { schema: { tags, summary: "Delete an OAuth client (soft); its grants and tokens are revoked", params: ClientIdParams, response: { 204: { type: 'null' }, ...problems(400, 404, 409) } } },
    async (req, reply) => {
      await u.deleteClient({ clientId: req.params.id });
      return reply.code(204).send();
    },
  );

  app.post(
    `${PATH}/:id/secret`,
    {
      schema: {
        tags,
        summary: "Rotate a confidential client's secret: the new one is in this answer only, the old one stops at once",
        params: ClientIdParams,
        response: { 200: OAuthClientWithSecret, ...problems(400, 404, 409) },
      },
    },
    async (req) => withSecret(await u.rotateClientSecret({ clientId: req.params.id })),
  );
};

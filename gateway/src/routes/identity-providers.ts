/**
 * The identity providers API (issue #40; registered inside `requiring('identity-providers.manage',
 * ...)`): the collection rules of DESIGN §2. Identity owns the settings and decides (validation,
 * escalation, the sealed secret); the gateway maps shapes only. Answers are no-store (the
 * authenticated context's rule).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityProvidersV1 } from '@iam/contracts';
import { CreateProviderBody, IdentityProvider, LINKING_MODES, PROVIDER_KINDS, ProviderIdParams, ProviderQuery, UpdateProviderBody } from '../schemas/identity-providers';
import { Envelope, PAGE_DEFAULT, PAGE_SIZE_DEFAULT, envelope, problems } from '../schemas/common';
import type { Upstreams } from '../upstreams';

const PATH = '/api/v1/identity-providers';

const oneOf = <T extends string>(xs: readonly T[], v: string, what: string): T => {
  const found = xs.find((x) => x === v);
  if (!found) throw new Error(`unknown ${what} "${v}"`);
  return found;
};

function providerJson(p: identityProvidersV1.IdentityProvider | undefined) {
  if (!p) throw new Error('identity answered no identity provider');
  const m = p.claimMapping;
  return {
    id: p.id,
    kind: oneOf(PROVIDER_KINDS, p.kind, 'provider kind'),
    name: p.name,
    displayName: p.displayName,
    discoveryUrl: p.discoveryUrl || null,
    clientId: p.clientId,
    hasClientSecret: p.hasClientSecret,
    scopes: p.scopes,
    claimMapping: { subject: m?.subject ?? [], email: m?.email ?? '', emailVerified: m?.emailVerified ?? '', givenName: m?.givenName ?? '', familyName: m?.familyName ?? '' },
    trustEmailVerified: p.trustEmailVerified,
    trustUpstreamMfa: p.trustUpstreamMfa,
    allowSignUp: p.allowSignUp,
    linking: oneOf(LINKING_MODES, p.linking, 'linking mode'),
    defaultRoles: p.defaultRoles,
    iconUrl: p.iconUrl,
    enabled: p.enabled,
    createdAt: p.createdAt!,
    updatedAt: p.updatedAt!,
    deletedAt: p.deletedAt ?? null,
  };
}

type GivenMapping = CreateProviderBody['claimMapping'];
const mapping = (m: GivenMapping): identityProvidersV1.ClaimMapping | undefined =>
  m ? { subject: m.subject ?? [], email: m.email ?? '', emailVerified: m.emailVerified ?? '', givenName: m.givenName ?? '', familyName: m.familyName ?? '' } : undefined;
const list = (xs: readonly string[] | undefined) => (xs === undefined ? undefined : { values: [...xs] });

export interface IdentityProviderRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'identityProviders'>;
}

export const identityProviderRoutes: FastifyPluginAsyncTypebox<IdentityProviderRoutesOptions> = async (app, { upstreams }) => {
  const u = upstreams.identityProviders;
  const tags = ['identity-providers'];
  const page = Envelope(IdentityProvider, { exactFlag: true, cursor: false });

  app.get(
    PATH,
    {
      schema: {
        tags,
        summary: 'List the upstream identity providers users may sign in with (paged, searchable), or fetch one with ?id=',
        querystring: ProviderQuery,
        response: { 200: { anyOf: [page, IdentityProvider] }, ...problems(400, 404) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      if (q.id !== undefined) {
        const one = providerJson(await u.getIdentityProvider({ id: q.id, includeDeleted: q.includeDeleted === true }));
        return reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(IdentityProvider, '200')).send(one);
      }
      const args = { page: q.page ?? PAGE_DEFAULT, pageSize: q.pageSize ?? PAGE_SIZE_DEFAULT, q: q.q ?? '', includeDeleted: q.includeDeleted ?? false };
      const r = await u.listIdentityProviders(args);
      return envelope(r.items.map(providerJson), args.page, args.pageSize, r.totalCount, { totalCountExact: true });
    },
  );

  app.get(
    `${PATH}/:id`,
    { schema: { tags, summary: 'Get one identity provider', params: ProviderIdParams, response: { 200: IdentityProvider, ...problems(400, 404) } } },
    async (req) => providerJson(await u.getIdentityProvider({ id: req.params.id, includeDeleted: false })),
  );

  app.post(
    PATH,
    {
      schema: {
        tags,
        summary: 'Configure an upstream identity provider (its client secret is sealed and never shown again)',
        body: CreateProviderBody,
        response: { 201: IdentityProvider, ...problems(400, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const created = providerJson(
        await u.createIdentityProvider({
          kind: b.kind,
          name: b.name,
          displayName: b.displayName,
          discoveryUrl: b.discoveryUrl ?? '',
          clientId: b.clientId,
          clientSecret: b.clientSecret ?? '',
          scopes: b.scopes ?? [],
          claimMapping: mapping(b.claimMapping),
          trustEmailVerified: b.trustEmailVerified ?? false,
          trustUpstreamMfa: b.trustUpstreamMfa ?? false,
          allowSignUp: b.allowSignUp ?? false,
          linking: b.linking ?? 'verified-email',
          defaultRoles: b.defaultRoles ?? [],
          iconUrl: b.iconUrl ?? '',
          enabled: b.enabled ?? true,
        }),
      );
      return reply.code(201).header('location', `${PATH}/${created.id}`).send(created);
    },
  );

  app.put(
    `${PATH}/:id`,
    {
      schema: {
        tags,
        summary: 'Update an identity provider: fields given replace, fields absent stay ("clientSecret": "" removes it)',
        params: ProviderIdParams,
        body: UpdateProviderBody,
        response: { 200: IdentityProvider, ...problems(400, 404, 409, 413, 415) },
      },
    },
    async (req) => {
      const b = req.body;
      return providerJson(
        await u.updateIdentityProvider({
          id: req.params.id,
          kind: b.kind,
          name: b.name,
          displayName: b.displayName,
          discoveryUrl: b.discoveryUrl === undefined ? undefined : (b.discoveryUrl ?? ''),
          clientId: b.clientId,
          clientSecret: b.clientSecret,
          scopes: list(b.scopes),
          claimMapping: mapping(b.claimMapping),
          trustEmailVerified: b.trustEmailVerified,
          trustUpstreamMfa: b.trustUpstreamMfa,
          allowSignUp: b.allowSignUp,
          linking: b.linking,
          defaultRoles: list(b.defaultRoles),
          iconUrl: b.iconUrl,
          enabled: b.enabled,
        }),
      );
    },
  );

  app.delete(
    `${PATH}/:id`,
    { schema: { tags, summary: 'Delete an identity provider (soft): its button goes; its linked identities stop signing in', params: ProviderIdParams, response: { 204: { type: 'null' }, ...problems(400, 404) } } },
    async (req, reply) => {
      await u.deleteIdentityProvider({ id: req.params.id });
      return reply.code(204).send();
    },
  );
};

/**
 * Sign-ins with other identity providers linked to an account (issue #40 item 3): the caller's own
 * (list, link another, unlink; registered in an authenticated context) and a user's, for
 * `users.manage` holders. Identity verifies the bearer token again and decides: first-party tokens
 * only, and linking or unlinking needs a sign-in within 5 minutes; never the last way in (409).
 *
 * Linking from the account page: POST …/link with a random `binding` the page keeps → `url`, where
 * the browser goes; the provider sends it back to the account page with `?federation={provider}&`
 * its query; the page POSTs …/complete with that query and the same binding.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { identityProvidersV1 } from '@iam/contracts';
import { problems } from '../../schemas/common';
import { CompleteLinkBody, IdentityIdParams, LinkedIdentity, MyIdentities, ProviderNameParams, StartLinkAnswer, StartLinkBody, UserIdentities, UserIdentityParams } from '../../schemas/identity-providers';
import type { Upstreams } from '../../upstreams';

const identityJson = (l: identityProvidersV1.LinkedIdentity) => ({
  id: l.id,
  providerId: l.providerId,
  provider: l.providerName,
  providerDisplayName: l.providerDisplayName,
  issuer: l.issuer,
  subject: l.subject,
  email: l.email,
  createdAt: l.createdAt!,
  lastUsedAt: l.lastUsedAt ?? null,
});

export interface LinkedIdentityRoutesOptions {
  readonly upstreams: Pick<Upstreams, 'linkedIdentities'>;
}

export const myLinkedIdentityRoutes: FastifyPluginAsyncTypebox<LinkedIdentityRoutesOptions> = async (app, { upstreams }) => {
  const u = upstreams.linkedIdentities;
  const tags = ['me'];
  const reauth = 'Needs a sign-in within the last 5 minutes (403 urn:iam:problem:reauthentication-required)';
  app.get(
    '/api/v1/me/identities',
    { schema: { tags, summary: 'Your sign-ins with other identity providers, and the providers you can link', response: { 200: MyIdentities, ...problems(403) } } },
    async (req) => {
      const r = await u.listMyIdentities({ accessToken: req.bearerToken ?? '' });
      return { items: r.identities.map(identityJson), providers: r.providers };
    },
  );
  app.post(
    '/api/v1/me/identities/:provider/link',
    { schema: { tags, summary: `Start linking a sign-in with this provider: send the browser to the answered url. ${reauth}`, params: ProviderNameParams, body: StartLinkBody, response: { 200: StartLinkAnswer, ...problems(400, 403, 404, 503) } } },
    async (req) => ({ url: (await u.startLink({ accessToken: req.bearerToken ?? '', providerName: req.params.provider, binding: req.body.binding })).url }),
  );
  app.post(
    '/api/v1/me/identities/:provider/complete',
    { schema: { tags, summary: "Complete a link with the provider's callback query and the same binding", params: ProviderNameParams, body: CompleteLinkBody, response: { 201: LinkedIdentity, ...problems(400, 403, 409, 503) } } },
    async (req, reply) => {
      const l = await u.completeLink({ accessToken: req.bearerToken ?? '', providerName: req.params.provider, callbackQuery: req.body.callbackQuery, binding: req.body.binding });
      return reply.code(201).send(identityJson(l));
    },
  );
  app.delete(
    '/api/v1/me/identities/:id',
    { schema: { tags, summary: `Unlink one (never your last way to sign in: 409). ${reauth}`, params: IdentityIdParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404, 409) } } },
    async (req, reply) => {
      await u.unlinkMyIdentity({ accessToken: req.bearerToken ?? '', identityId: req.params.id });
      return reply.code(204).send();
    },
  );
};

/** users.manage: a user's linked identities. */
export const userLinkedIdentityRoutes: FastifyPluginAsyncTypebox<LinkedIdentityRoutesOptions> = async (app, { upstreams }) => {
  const u = upstreams.linkedIdentities;
  const tags = ['users'];
  app.get(
    '/api/v1/users/:id/identities',
    { schema: { tags, summary: "A user's sign-ins with other identity providers", params: IdentityIdParams, response: { 200: UserIdentities, ...problems(400, 403) } } },
    async (req) => ({ items: (await u.listUserIdentities({ userId: req.params.id })).identities.map(identityJson) }),
  );
  app.delete(
    '/api/v1/users/:id/identities/:identityId',
    { schema: { tags, summary: "Unlink one of a user's (never the user's last way to sign in: 409)", params: UserIdentityParams, response: { 204: { type: 'null' }, ...problems(400, 403, 404, 409) } } },
    async (req, reply) => {
      await u.unlinkUserIdentity({ userId: req.params.id, identityId: req.params.identityId });
      return reply.code(204).send();
    },
  );
};

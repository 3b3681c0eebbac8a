/**
 * A real, independent OpenID provider for the federation tests (issue #40 "How it is tested"): a
 * bare `oidc-provider` with its in-memory adapter on a loopback port of its own, one confidential
 * client. Its interactions sign in whoever the test named (`signInAs`) and consent at once, so a
 * browser or a fetch walks straight through, with the `amr` the test named; `setUp(false)` makes it
 * answer 503 (the upstream being down).
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamAccount {
  readonly sub: string;
  readonly email?: string;
  readonly emailVerified?: boolean;
  readonly givenName?: string;
  readonly familyName?: string;
  /** Extra claims in the ID token (e.g. Entra's tid and oid). */
  readonly extra?: Readonly<Record<string, string>>;
  /** The sign-in's `amr` there (default `["pwd"]`): `["pwd", "mfa"]` is a second factor used upstream. */
  readonly amr?: readonly string[];
}

export interface UpstreamOp {
  readonly issuer: string;
  readonly discoveryUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Who the next interactions sign in. */
  signInAs(account: UpstreamAccount): void;
  /** Whether the OP answers (false: every request gets 503). */
  setUp(up: boolean): void;
  close(): Promise<void>;
}

export async function startUpstreamOp(opts: { redirectUris: readonly string[]; clientId?: string; clientSecret?: string }): Promise<UpstreamOp> {
  const { default: Provider } = await import('oidc-provider');
  const accounts = new Map<string, UpstreamAccount>();
  let current: UpstreamAccount | undefined;
  let up = true;
  const clientId = opts.clientId ?? 'federation-test';
  const clientSecret = opts.clientSecret ?? 'federation-test-secret-0123456789abcdef';

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [...opts.redirectUris], response_types: ['code'], grant_types: ['authorization_code'] }],
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    acrValues: ['urn:upstream:loa:1'],
    // amr with the openid scope: real upstreams (Entra, Okta) send it unasked.
    claims: { acr: null, auth_time: null, sid: null, openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'tid', 'oid'] },
    conformIdTokenClaims: false,
    // Cookies are per host, not per port: on the same 127.0.0.1 as the platform's provider (also an
    // oidc-provider), the default names would overwrite its session.
    cookies: { keys: ['federation-test-upstream-cookie-key'], names: { session: '_upstream_session', interaction: '_upstream_interaction', resume: '_upstream_interaction_resume' } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => {
      const a = accounts.get(sub);
      if (!a) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          ...(a.email ? { email: a.email, email_verified: a.emailVerified ?? false } : {}),
          ...(a.givenName ? { given_name: a.givenName } : {}),
          ...(a.familyName ? { family_name: a.familyName } : {}),
          ...a.extra,
        }),
      };
    },
  });
  const callback = provider.callback();

  server.on('request', (req, res) => {
    if (!up) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    const m = /^\/interaction\/([^/?]+)/.exec(req.url ?? '');
    if (!m) {
      void callback(req, res);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        if (!current) throw new Error('upstream OP: no account to sign in (signInAs first)');
        accounts.set(current.sub, current);
        await provider.interactionFinished(req, res, { login: { accountId: current.sub, amr: [...(current.amr ?? ['pwd'])], acr: 'urn:upstream:loa:1' } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    })().catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });

  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    signInAs: (a) => {
      current = a;
      accounts.set(a.sub, a);
    },
    setUp: (u) => {
      up = u;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The OpenID provider suites' shared set-up (oidc-*.e2e.test.ts): the system through the gateway
 * on a port known before it starts (the issuer), the relying party's own server on another origin
 * (support/rp-server.ts), static clients registered with its URIs, openid-client as RP, and
 * Chromium with the pages' CSP enforced.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClient } from '@iam/identity';
import { StaticClientLookup } from '../../../../services/identity/src/testing/static-client-lookup';
import type * as openidClient from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import type { PresetEndpoints } from '@iam/identity';
import { ADMIN, type TestSystem, startTestSystem } from '../harness';
import { browserTestsRunnable, cspContext, hasChromium, launchChromium } from './browser';
import { freePort } from './oidc-rp';
import { type RpServer, startRpServer } from './rp-server';

export type OpenIdClient = typeof openidClient;
export type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;

/** A test of `file` that drives the hosted pages in Chromium (skipped without it, and the skip recorded for the run's summary). */
export function browserTest(file: string): jest.It {
  return browserTestsRunnable(file) ? it : it.skip;
}

function base(rp: RpServer): Omit<OAuthClient, 'clientId' | 'name' | 'type' | 'grantTypes'> {
  const now = new Date();
  return {
    redirectUris: [rp.callback],
    postLogoutRedirectUris: [rp.signedOut],
    roles: [],
    requirePar: false,
    dpopBound: false,
    apiPermissions: [],
    idTokenSignedResponseAlg: 'RS256',
    userinfoSignedResponseAlg: null,
    resourceServer: false,
    firstParty: false,
    builtIn: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** The suites' clients: third party (their users' API tokens carry only the consented API permissions) but for `spa`. */
export function suiteClients(rp: RpServer) {
  const b = base(rp);
  const code = { ...b, type: 'confidential' as const, grantTypes: ['authorization_code', 'refresh_token'] };
  const secret = () => randomBytes(24).toString('base64url');
  return {
    /** Third party: its users may delegate users.manage to it (asked as a scope), nothing else. */
    web: { client: { ...code, clientId: 'rp-web', name: 'Reporting app', apiPermissions: ['users.manage'] } as OAuthClient, secret: secret() },
    service: { client: { ...b, clientId: 'svc-reports', name: 'Reports job', type: 'confidential', grantTypes: ['client_credentials'], redirectUris: [], roles: ['Reporter'] } as OAuthClient, secret: secret() },
    doomed: { client: { ...code, clientId: 'rp-doomed', name: 'Doomed app' } as OAuthClient, secret: secret() },
    /** Another confidential client (introspection and revocation of tokens not its own). */
    other: { client: { ...code, clientId: 'rp-other', name: 'Other app', apiPermissions: ['users.manage'] } as OAuthClient, secret: secret() },
    par: { client: { ...code, clientId: 'rp-par', name: 'PAR app', requirePar: true } as OAuthClient, secret: secret() },
    device: {
      client: { ...b, clientId: 'rp-tv', name: 'Living-room TV', type: 'public', redirectUris: [], grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], apiPermissions: ['users.manage'] } as OAuthClient,
      secret: undefined,
    },
    spa: { client: { ...b, clientId: 'rp-spa', name: 'First-party app', type: 'public', grantTypes: ['authorization_code', 'refresh_token'], firstParty: true } as OAuthClient, secret: undefined },
  };
}
export type SuiteClients = ReturnType<typeof suiteClients>;
export interface Registered {
  readonly client: OAuthClient;
  readonly secret: string | undefined;
}

export interface OidcSuite {
  system: TestSystem;
  oc: OpenIdClient;
  issuer: string;
  rp: RpServer;
  browser: Browser;
  clients: StaticClientLookup;
  c: SuiteClients;
  /** openid-client's configuration of a client (client_secret_basic with a secret, else none). */
  discover(r: Registered, secret?: string): Promise<Config>;
  /** An authorization request with PKCE (and prompt=consent unless `extra` says otherwise). */
  authorization(config: Config, extra?: Record<string, string>): Promise<{ url: URL; verifier: string; state: string }>;
  /** Signs in (and consents) in Chromium with CSP enforced; answers the URL the RP's server received. */
  signInInBrowser(authUrl: URL, opts?: BrowserSignIn): Promise<URL>;
  asAdmin(method: string, path: string, body?: unknown): Promise<Response>;
  newUser(roles?: string[]): Promise<{ userId: string; email: string; password: string }>;
}

export interface BrowserSignIn {
  consent?: boolean;
  email?: string;
  password?: string;
  /** Called on each page (sign-in, consent) with its document response's headers. */
  check?: (page: Page, step: string, headers: Record<string, string>) => Promise<void>;
}

/**
 * Registers the suite's beforeAll/afterAll; the answer is filled once they ran. `env` is added to
 * the system's (e.g. JWT_ALG); `federationPresets` (read when the system starts) points identity's
 * GitHub and Google presets at local stand-ins.
 */
export function oidcSuite(opts: { env?: Record<string, string>; portEnv?: string; federationPresets?: () => PresetEndpoints } = {}): OidcSuite {
  const s = {} as OidcSuite;
  beforeAll(async () => {
    s.oc = await import('openid-client');
    s.rp = await startRpServer();
    s.c = suiteClients(s.rp);
    s.clients = new StaticClientLookup(Object.values(s.c));
    // A fixed port where the machine asks for one (the issuer must be known before start).
    const port = Number(process.env[opts.portEnv ?? 'OIDC_E2E_PORT'] ?? 0) || (await freePort());
    s.issuer = `http://127.0.0.1:${port}`;
    s.system = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: s.issuer, MFA_REQUIRED_ROLES: 'Secured', ...opts.env }, identityClients: s.clients, federationPresets: opts.federationPresets?.() });
    if (hasChromium()) s.browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await s.browser?.close();
    await s.system?.stop();
    await s.rp?.close();
  });

  s.discover = (r, secret = r.secret) =>
    s.oc.discovery(new URL(s.issuer), r.client.clientId, secret ? { client_secret: secret } : undefined, secret ? s.oc.ClientSecretBasic(secret) : s.oc.None(), {
      execute: [s.oc.allowInsecureRequests],
    });

  s.authorization = async (config, extra = {}) => {
    const verifier = s.oc.randomPKCECodeVerifier();
    const state = s.oc.randomState();
    const url = s.oc.buildAuthorizationUrl(config, {
      redirect_uri: s.rp.callback,
      scope: 'openid email offline_access',
      code_challenge: await s.oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
      ...extra,
    });
    return { url, verifier, state };
  };

  s.signInInBrowser = async (authUrl, o = {}) => {
    const { context, page, violations } = await cspContext(s.browser);
    let headers: Record<string, string> = {};
    page.on('response', (r) => {
      if (r.request().isNavigationRequest() && r.status() < 300) headers = r.headers();
    });
    try {
      await page.goto(authUrl.href);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await o.check?.(page, 'sign-in', headers);
      await page.getByLabel('Email').fill(o.email ?? ADMIN.email);
      await page.getByLabel('Password').fill(o.password ?? ADMIN.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      if (o.consent) {
        await page.getByRole('heading', { name: 'Allow access' }).waitFor();
        await o.check?.(page, 'consent', headers);
        await page.getByRole('button', { name: 'Allow' }).click();
      }
      // The browser itself arrives at the app (another origin), its page shown.
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
      return await s.rp.next('/callback');
    } finally {
      await context.close();
    }
  };

  s.asAdmin = async (method, path, body) => {
    const login = await fetch(`${s.issuer}/api/v1/auth/generate-jwt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const token = ((await login.json()) as { token: string }).token;
    const authorization = `Bearer ${token}`;
    return fetch(`${s.issuer}${path}`, body === undefined ? { method, headers: { authorization } } : { method, headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) });
  };

  s.newUser = async (roles = []) => {
    if (roles.includes('Secured')) expect([201, 409]).toContain((await s.asAdmin('POST', '/api/v1/roles', { name: 'Secured', description: 'must use a second factor' })).status);
    const email = `oidc-${randomBytes(4).toString('hex')}@example.com`;
    const password = `Oidc!${randomBytes(8).toString('hex')}#Aa9`;
    const created = await s.asAdmin('POST', '/api/v1/users', { firstName: 'Grace', lastName: 'Hopper', email, password, ...(roles.length ? { roles } : {}) });
    expect(created.status).toBe(201);
    return { userId: ((await created.json()) as { id: string }).id, email, password };
  };
  return s;
}

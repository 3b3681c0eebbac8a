/**
 * The Google and GitHub presets end to end (issue #40), with no network: identity's presets point
 * at a local stand-in speaking their documented endpoints (Google: OpenID Connect discovery, JWKS,
 * authorize, token, `iss` in the authorization response; GitHub: /login/oauth/authorize,
 * /login/oauth/access_token, /user, /user/emails), handed to the system in code when it starts
 * (never by the environment or the API, which refuses an endpoint for a preset: SSRF). Each
 * sign-in goes through the hosted page in Chromium, CSP enforced, the app on another origin.
 */
import { randomBytes } from 'node:crypto';
import { type StandIn, startStandIn } from '../../../services/identity/src/testing/upstream-standin';
import { cspContext } from './support/browser';
import { browserTest, oidcSuite } from './support/oidc-suite';

const browserIt = browserTest(__filename);

jest.setTimeout(120_000);

describe('federation: the Google and GitHub presets against local stand-ins', () => {
  const CLIENT = { clientId: 'preset-client', clientSecret: 'preset-secret-0123456789abcdef0123' };
  let standIn: StandIn;
  // Before the suite's system starts: the presets are read then.
  beforeAll(async () => {
    standIn = await startStandIn(CLIENT);
  });
  const s = oidcSuite({ portEnv: 'FEDERATION_PRESETS_E2E_PORT', federationPresets: () => ({ googleDiscoveryUrl: standIn.discoveryUrl, github: standIn.github }) });

  beforeAll(async () => {
    for (const [kind, displayName] of [['google', 'Google'], ['github', 'GitHub']] as const) {
      const made = await s.asAdmin('POST', '/api/v1/identity-providers', { kind, name: kind, displayName, ...CLIENT, trustEmailVerified: true, allowSignUp: true });
      expect(made.status).toBe(201);
    }
    // A caller cannot point a preset elsewhere.
    const elsewhere = await s.asAdmin('POST', '/api/v1/identity-providers', { kind: 'google', name: 'google-2', displayName: 'Google 2', ...CLIENT, discoveryUrl: standIn.discoveryUrl });
    expect(elsewhere.status).toBe(400);
  });

  afterAll(async () => {
    await standIn?.close();
  });

  /** A sign-in at the hosted page through `button`; the ID token's claims the app gets. */
  async function signInWith(button: string): Promise<Record<string, unknown>> {
    const config = await s.discover(s.c.spa);
    const { url, verifier, state } = await s.authorization(config, { prompt: 'login', scope: 'openid email' });
    const { context, page, violations } = await cspContext(s.browser);
    try {
      await page.goto(url.href);
      await page.getByRole('link', { name: `Sign in with ${button}` }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const tokens = await s.oc.authorizationCodeGrant(config, await s.rp.next('/callback'), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    return tokens.claims() as Record<string, unknown>;
  }
  const userByEmail = async (email: string) =>
    ((await (await s.asAdmin('GET', `/api/v1/users?q=${encodeURIComponent(email)}`)).json()) as { items: Array<{ id: string; email: string; emailVerified: boolean; firstName: string }> }).items;
  const identitiesOf = async (userId: string) => ((await (await s.asAdmin('GET', `/api/v1/users/${userId}/identities`)).json()) as { items: Array<{ provider: string; issuer: string; subject: string }> }).items;

  browserIt('Google: discovery, PKCE, the ID token checked; an account signed up, the identity keyed on its sub', async () => {
    const email = `gina-${randomBytes(4).toString('hex')}@gmail.example`;
    const sub = String(100_000_000_000 + Math.floor(Math.random() * 1e9));
    standIn.signInAs({ sub, email, emailVerified: true, name: 'Gina Google' });
    expect(await signInWith('Google')).toMatchObject({ email, amr: ['fed'] });
    const [user] = await userByEmail(email);
    expect(user).toMatchObject({ email, emailVerified: true, firstName: 'Gina' });
    expect(await identitiesOf(user!.id)).toEqual([expect.objectContaining({ provider: 'google', issuer: standIn.url, subject: sub })]);
  });

  browserIt('GitHub: plain OAuth, the identity on the numeric id, the email only as /user/emails marks it verified', async () => {
    const verified = `octo-${randomBytes(4).toString('hex')}@github.example`;
    const sub = String(1_000_000 + Math.floor(Math.random() * 1e6));
    // The public profile email is unverified; the verified primary one is used.
    standIn.signInAs({ sub, email: `public-${verified}`, name: 'Octo Cat', githubEmails: [{ email: `public-${verified}`, primary: false, verified: false }, { email: verified, primary: true, verified: true }] });
    expect(await signInWith('GitHub')).toMatchObject({ email: verified, amr: ['fed'] });
    const [user] = await userByEmail(verified);
    expect(user).toMatchObject({ email: verified, emailVerified: true });
    expect(await identitiesOf(user!.id)).toEqual([expect.objectContaining({ provider: 'github', issuer: 'https://github.com', subject: sub })]);
    expect(await userByEmail(`public-${verified}`)).toEqual([]);
  });
});

/**
 * The provider's refresh retry window (issue #35, item 1; OIDC_REFRESH_RETRY_SECONDS, 10 s by
 * default): a client that lost the answer of a refresh and presents the same token again, while
 * the successor it was given is unused, gets that same answer (the same refresh, access and ID
 * tokens), not a reuse that revokes its grant; nothing is forked or issued twice. After the
 * window, or once the successor was used, it is a reuse as before: the grant is revoked and the
 * reuse recorded. The answer is kept sealed, and dropped by housekeeping after the window.
 */
import { randomUUID } from 'node:crypto';
import type * as openidClient from 'openid-client';
import { eventually } from '@iam/platform/testing';
import { ADMIN, type TestSystem, http, startTestSystem } from './harness';
import { freePort } from './support/nats';
import { signInOverHttp } from './support/oidc-rp';
import { SealingKeys } from '../../../services/identity/src/domain/sealing';
import { RefreshRetry } from '../../../services/identity/src/infra/oidc/refresh-retry';

jest.setTimeout(120_000);

type OpenIdClient = typeof openidClient;
type Config = Awaited<ReturnType<OpenIdClient['discovery']>>;
const REDIRECT = 'http://127.0.0.1:21999/callback';

/** The OAuth error code of a refused call. */
async function oauthError(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { error?: string }).error;
  }
}

describe('OpenID provider: a refresh retried within its window gets the same answer', () => {
  let sys: TestSystem;
  let oc: OpenIdClient;
  let issuer: string;
  let admin: string;

  beforeAll(async () => {
    oc = await import('openid-client');
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer } });
    admin = (await http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: ADMIN })).json.token;
  });

  afterAll(async () => {
    await sys?.stop();
  });

  async function client(extra: Record<string, unknown> = {}): Promise<{ clientId: string; clientSecret: string; config: Config }> {
    const r = await http(issuer, 'POST', '/api/v1/clients', {
      token: admin,
      body: { name: `Retry ${randomUUID().slice(0, 8)}`, type: 'confidential', redirectUris: [REDIRECT], postLogoutRedirectUris: [], grantTypes: ['authorization_code', 'refresh_token'], ...extra },
    });
    expect(r.status).toBe(201);
    const { clientId, clientSecret } = r.json as { clientId: string; clientSecret: string };
    const config = await oc.discovery(new URL(issuer), clientId, { client_secret: clientSecret }, oc.ClientSecretBasic(clientSecret), { execute: [oc.allowInsecureRequests] });
    return { clientId, clientSecret, config };
  }

  /** A signed-in grant of `config` (the administrator, consent given): its first tokens. */
  async function grant(config: Config, options?: Parameters<OpenIdClient['authorizationCodeGrant']>[4]) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access',
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    const end = await signInOverHttp(url);
    return oc.authorizationCodeGrant(config, end.url, { pkceCodeVerifier: verifier, expectedState: state }, undefined, options);
  }

  const reuses = async () =>
    (await sys.identity.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM outbox_events WHERE subject = 'identity.refresh.reuse_detected'`))[0]!.n;
  const ageRotation = (token: string, seconds: number) =>
    sys.identity.dataSource.query(`UPDATE oidc_payloads SET consumed_at = consumed_at - make_interval(secs => $2) WHERE kind = 'RefreshToken' AND id = $1`, [token, seconds]);

  it('a retry within the window: the same refresh, access and ID tokens; the chain goes on and no reuse is recorded', async () => {
    const { config } = await client();
    const t0 = await grant(config);
    const before = await reuses();
    const lost = await oc.refreshTokenGrant(config, t0.refresh_token!);
    const retried = await oc.refreshTokenGrant(config, t0.refresh_token!);
    expect(retried.refresh_token).toBe(lost.refresh_token);
    expect(retried.access_token).toBe(lost.access_token);
    expect(retried.id_token).toBe(lost.id_token);
    const next = await oc.refreshTokenGrant(config, retried.refresh_token!);
    expect(next.refresh_token).not.toBe(retried.refresh_token);
    expect(await reuses()).toBe(before);
  });

  it('once the successor was used, the old token is a reuse: the grant is revoked and the reuse recorded', async () => {
    const { config } = await client();
    const t0 = await grant(config);
    const before = await reuses();
    const t1 = await oc.refreshTokenGrant(config, t0.refresh_token!);
    const t2 = await oc.refreshTokenGrant(config, t1.refresh_token!);
    expect(await oauthError(oc.refreshTokenGrant(config, t0.refresh_token!))).toBe('invalid_grant');
    expect(await oauthError(oc.refreshTokenGrant(config, t2.refresh_token!))).toBe('invalid_grant');
    // Written to the audit outbox as the library revokes the grant (not before the answer).
    await eventually(async () => (await reuses()) === before + 1, 5_000, 50);
  });

  it('after the window, presenting the rotated token again is a reuse that revokes the grant', async () => {
    const { config } = await client();
    const t0 = await grant(config);
    const t1 = await oc.refreshTokenGrant(config, t0.refresh_token!);
    await ageRotation(t0.refresh_token!, 11);
    expect(await oauthError(oc.refreshTokenGrant(config, t0.refresh_token!))).toBe('invalid_grant');
    expect(await oauthError(oc.refreshTokenGrant(config, t1.refresh_token!))).toBe('invalid_grant');
  });

  it('the kept answer is sealed, another client cannot retry it, and housekeeping drops it after the window', async () => {
    const a = await client();
    const b = await client();
    const t0 = await grant(a.config);
    const t1 = await oc.refreshTokenGrant(a.config, t0.refresh_token!);
    const [row] = await sys.identity.dataSource.query<Array<{ retry_answer: Buffer; successor_id: string }>>(
      `SELECT retry_answer, successor_id FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = $1`,
      [t0.refresh_token],
    );
    expect(row!.successor_id).toBe(t1.refresh_token);
    expect(row!.retry_answer.includes(Buffer.from(t1.refresh_token!))).toBe(false);
    expect(row!.retry_answer.includes(Buffer.from(t1.access_token))).toBe(false);
    // The token of another client: refused, and the owner's chain is untouched.
    expect(await oauthError(oc.refreshTokenGrant(b.config, t0.refresh_token!))).toBe('invalid_grant');
    expect((await oc.refreshTokenGrant(a.config, t0.refresh_token!)).refresh_token).toBe(t1.refresh_token);
    await ageRotation(t0.refresh_token!, 11);
    await new RefreshRetry(new SealingKeys(Buffer.alloc(32)), 10, undefined as never).purge(sys.identity.dataSource);
    const [after] = await sys.identity.dataSource.query<Array<{ retry_answer: Buffer | null }>>(`SELECT retry_answer FROM oidc_payloads WHERE kind = 'RefreshToken' AND id = $1`, [t0.refresh_token]);
    expect(after!.retry_answer).toBeNull();
  });

  it('one token presented several times at once: every answer that succeeds carries the same tokens', async () => {
    const { config } = await client();
    const t0 = await grant(config);
    const answers = await Promise.allSettled(Array.from({ length: 4 }, () => oc.refreshTokenGrant(config, t0.refresh_token!)));
    const issued = answers.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    for (const r of answers) if (r.status === 'rejected') expect(r.reason).toMatchObject({ error: 'invalid_grant' });
    expect(new Set(issued.map((t) => t.refresh_token)).size).toBeLessThanOrEqual(1);
    expect(new Set(issued.map((t) => t.access_token)).size).toBeLessThanOrEqual(1);
    // Whichever won, the chain goes on from the one successor.
    const successor = issued[0]?.refresh_token ?? (await oc.refreshTokenGrant(config, t0.refresh_token!)).refresh_token!;
    expect((await oc.refreshTokenGrant(config, successor)).refresh_token).toBeDefined();
  });

  it('a DPoP-bound client: a retry with the same key gets the same bound tokens; with another key, invalid_grant', async () => {
    const { config } = await client({ dpopBound: true });
    const key = await oc.randomDPoPKeyPair('ES256');
    const dpop = () => ({ DPoP: oc.getDPoPHandle(config, key) });
    const t0 = await grant(config, dpop());
    const t1 = await oc.refreshTokenGrant(config, t0.refresh_token!, undefined, dpop());
    expect(t1.token_type.toLowerCase()).toBe('dpop');
    expect((await oc.refreshTokenGrant(config, t0.refresh_token!, undefined, dpop())).access_token).toBe(t1.access_token);
    const other = await oc.randomDPoPKeyPair('ES256');
    expect(await oauthError(oc.refreshTokenGrant(config, t0.refresh_token!, undefined, { DPoP: oc.getDPoPHandle(config, other) }))).toBe('invalid_grant');
    // The refusal revoked nothing: the holder of the key goes on.
    expect((await oc.refreshTokenGrant(config, t1.refresh_token!, undefined, dpop())).refresh_token).toBeDefined();
  });
});

/**
 * The relying party against a real upstream OP (a bare oidc-provider on loopback) and against the
 * stand-in whose ID tokens a test spoils: the happy path, and each refusal of issue #40 with its reason.
 */
import { followToCallback } from '../../testing/follow-upstream';
import { type UpstreamOp, startUpstreamOp } from '../../testing/upstream-op';
import { type StandIn, startStandIn } from '../../testing/upstream-standin';
import { DEFAULT_CLAIM_MAPPING, type IdentityProviderRecord } from '../../domain/identity-providers';
import { UpstreamRefusal } from './upstream-client';
import { createUpstreams } from './upstreams';

const REDIRECT = 'http://127.0.0.1:9/federation/callback';
const SECRET = 'stand-in-secret-0123456789abcdef0123';

function provider(over: Partial<IdentityProviderRecord>): IdentityProviderRecord {
  return {
    id: '0b7f2f3e-8d47-4a4c-9a43-6c8f7c1f0a01',
    kind: 'oidc',
    name: 'upstream',
    displayName: 'Upstream',
    discoveryUrl: null,
    clientId: 'federation-test',
    hasClientSecret: true,
    scopes: [],
    claimMapping: DEFAULT_CLAIM_MAPPING,
    trustEmailVerified: false,
    trustUpstreamMfa: false,
    allowSignUp: true,
    linking: 'verified-email',
    defaultRoles: [],
    iconUrl: '',
    enabled: true,
    createdAt: new Date(),
    updatedAt: new Date(),
    deletedAt: null,
    version: 1,
    ...over,
  };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof UpstreamRefusal) return err.reason;
    throw err;
  }
  throw new Error('not refused');
}

describe('a real upstream OpenID provider (oidc-provider on loopback)', () => {
  let op: UpstreamOp;
  beforeAll(async () => {
    op = await startUpstreamOp({ redirectUris: [REDIRECT] });
  });
  afterAll(async () => op?.close());

  const upstreams = () => createUpstreams({ secretOf: async () => op.clientSecret });
  const p = () => provider({ discoveryUrl: op.discoveryUrl, clientId: op.clientId });

  it('signs in: PKCE S256, state, nonce and iss checked; the mapped identity', async () => {
    op.signInAs({ sub: 'u-1', email: 'Ada@Example.com', emailVerified: true, givenName: 'Ada', familyName: 'Lovelace' });
    const client = await upstreams().clientFor(p());
    const s = await client.start(REDIRECT);
    expect(s.url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(s.url.searchParams.get('nonce')).toBe(s.nonce);
    const back = await followToCallback(s.url, REDIRECT);
    expect(back.searchParams.get('iss')).toBe(op.issuer);
    const id = await client.finish(back, s, REDIRECT);
    expect(id).toMatchObject({ issuer: op.issuer, subject: 'u-1', email: 'ada@example.com', emailVerified: true, givenName: 'Ada', familyName: 'Lovelace' });
  });

  it('maps Entra-style tid + oid to the subject', async () => {
    op.signInAs({ sub: 'pairwise-xyz', extra: { tid: 'tenant-1', oid: 'object-9' } });
    const client = await upstreams().clientFor(p());
    const s = await client.start(REDIRECT);
    const id = await client.finish(await followToCallback(s.url, REDIRECT), s, REDIRECT);
    expect(id.subject).toBe('pairwise-xyz');
    const entra = await upstreams().clientFor(provider({ discoveryUrl: op.discoveryUrl, clientId: op.clientId, claimMapping: { ...DEFAULT_CLAIM_MAPPING, subject: ['tid', 'oid'] } }));
    const s2 = await entra.start(REDIRECT);
    expect((await entra.finish(await followToCallback(s2.url, REDIRECT), s2, REDIRECT)).subject).toBe('tenant-1:object-9');
  });

  it('refuses a forged state', async () => {
    op.signInAs({ sub: 'u-2' });
    const client = await upstreams().clientFor(p());
    const s = await client.start(REDIRECT);
    const back = await followToCallback(s.url, REDIRECT);
    back.searchParams.set('state', 'forged');
    expect(await refusal(client.finish(back, s, REDIRECT))).toBe('state');
  });

  it('refuses a replayed code', async () => {
    op.signInAs({ sub: 'u-3' });
    const client = await upstreams().clientFor(p());
    const s = await client.start(REDIRECT);
    const back = await followToCallback(s.url, REDIRECT);
    await client.finish(back, s, REDIRECT);
    expect(await refusal(client.finish(back, s, REDIRECT))).toBe('code');
  });

  it('answers unavailable when the upstream is down', async () => {
    op.setUp(false);
    try {
      expect(await refusal(upstreams().clientFor(p()))).toBe('unavailable');
    } finally {
      op.setUp(true);
    }
  });
});

describe('spoiled ID tokens and the presets (a stand-in, no network)', () => {
  let s: StandIn;
  beforeAll(async () => {
    s = await startStandIn({ clientId: 'federation-test', clientSecret: SECRET });
  });
  afterAll(async () => s?.close());
  afterEach(() => s.spoil({}));

  const upstreams = () => createUpstreams({ secretOf: async () => SECRET, presets: { googleDiscoveryUrl: s.discoveryUrl, github: s.github } });

  async function walk(kind: 'oidc' | 'google' | 'github') {
    const client = await upstreams().clientFor(provider({ kind, discoveryUrl: kind === 'oidc' ? s.discoveryUrl : null }));
    const st = await client.start(REDIRECT);
    return client.finish(await followToCallback(st.url, REDIRECT), st, REDIRECT);
  }

  it('Google preset: its discovery, an identity', async () => {
    s.signInAs({ sub: '1099', email: 'g@example.com', emailVerified: true });
    await expect(walk('google')).resolves.toMatchObject({ issuer: s.url, subject: '1099', email: 'g@example.com', emailVerified: true });
  });

  it.each([
    ['an ID token for another aud', { aud: 'someone-else' }, 'audience'],
    ['alg: none', { algNone: true }, 'algorithm'],
    ['a wrong iss in the ID token', { iss: 'https://evil.example' }, 'issuer'],
    ['a wrong iss in the authorization response (RFC 9207)', { responseIss: 'https://evil.example' }, 'issuer'],
    ['an expired ID token', { expired: true }, 'expired'],
    ['another nonce', { nonce: 'not-ours' }, 'nonce'],
  ])('refuses %s', async (_name, spoil, reason) => {
    s.signInAs({ sub: '7', email: 'x@example.com', emailVerified: true });
    s.spoil(spoil);
    expect(await refusal(walk('oidc'))).toBe(reason);
  });

  it('GitHub preset: the numeric id, and only a verified email from /user/emails', async () => {
    s.signInAs({ sub: '4242', name: 'Grace Hopper', githubEmails: [{ email: 'unverified@example.com', primary: true, verified: false }, { email: 'Grace@Example.com', primary: false, verified: true }] });
    await expect(walk('github')).resolves.toEqual({ issuer: 'https://github.com', subject: '4242', email: 'grace@example.com', emailVerified: true, givenName: 'Grace', familyName: 'Hopper', amr: [] });
  });

  it('GitHub preset: no verified email, no email at all', async () => {
    s.signInAs({ sub: '4343', email: 'claimed@example.com', githubEmails: [{ email: 'claimed@example.com', primary: true, verified: false }] });
    const id = await walk('github');
    expect(id.email).toBeUndefined();
    expect(id.emailVerified).toBe(false);
  });
});

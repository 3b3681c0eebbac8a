/**
 * Signing in with another identity provider against the real PostgreSQL and a real upstream OP
 * (a bare oidc-provider on loopback), plus the stand-in for spoiled tokens and GitHub: sign-up,
 * auto-link, proving the local account, the pre-hijack and nOAuth cases, linking from the account,
 * unlinking (never the last way in), and each refusal audited with its reason.
 */
import { SUBJECTS } from '@iam/contracts';
import { AppError } from '@iam/platform';
import { type MigratedDatabase, migratedTestDatabase } from '@iam/platform/testing';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AccountProvisioning } from '../domain/federated-identities';
import { DEFAULT_CLAIM_MAPPING, type IdentityProviderSettings } from '../domain/identity-providers';
import type { Principal } from '../domain/model';
import { createUpstreams } from '../infra/federation/upstreams';
import { entities, migrations } from '../infra/schema';
import { pgIdentityStores, pgUnitOfWork } from '../infra/stores';
import { followToCallback } from '../testing/follow-upstream';
import { type UpstreamOp, startUpstreamOp } from '../testing/upstream-op';
import { type StandIn, startStandIn } from '../testing/upstream-standin';
import { type FederationUseCases, createFederationUseCases, upstreamAmr } from './federation';

const CALLBACK = 'http://127.0.0.1:9/oidc/federation';
const SECRET = 'stand-in-secret-0123456789abcdef0123';

describe('federation: signing in with another identity provider', () => {
  let db: MigratedDatabase;
  let ds: DataSource;
  let op: UpstreamOp;
  let standIn: StandIn;
  let fed: FederationUseCases;
  const users = new Map<string, Principal & { password: boolean }>();
  const stores = () => pgIdentityStores(ds.manager);

  const provisioning: AccountProvisioning = {
    provisionUser: async (input) => {
      if ([...users.values()].some((u) => u.email === input.email)) throw AppError.conflict('taken');
      const p = { userId: randomUUID(), firstName: input.firstName, lastName: input.lastName, email: input.email, roles: [...input.roles], permissions: [], emailVerified: input.emailVerified, password: false };
      users.set(p.userId, p);
      return { userId: p.userId };
    },
    hasPassword: async (userId) => users.get(userId)?.password ?? false,
  };
  const local = (email: string, emailVerified: boolean) => {
    const p = { userId: randomUUID(), firstName: 'L', lastName: 'U', email, roles: [], permissions: [], emailVerified, password: true };
    users.set(p.userId, p);
    return p;
  };
  const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

  async function provider(over: Partial<IdentityProviderSettings> = {}) {
    const id = randomUUID();
    const p = await stores().identityProviders.insert({
      id,
      kind: 'oidc',
      name: `p-${id.slice(0, 8)}`,
      displayName: 'Upstream',
      discoveryUrl: op.discoveryUrl,
      clientId: op.clientId,
      scopes: [],
      claimMapping: DEFAULT_CLAIM_MAPPING,
      trustEmailVerified: true,
      trustUpstreamMfa: false,
      allowSignUp: true,
      linking: 'verified-email',
      defaultRoles: [],
      iconUrl: '',
      enabled: true,
      sealedSecret: null,
      ...over,
    });
    return p!;
  }
  const refusals = async (reason: string) =>
    Number((await ds.query<Array<{ n: string }>>(`SELECT count(*) AS n FROM outbox_events WHERE subject = $1 AND convert_from(payload, 'LATIN1') LIKE $2`, [SUBJECTS.upstreamSignInRefused, `%${reason}%`]))[0]!.n);

  /** Begin, walk the upstream, come back: the outcome. */
  async function signIn(name: string, binding = 'browser-1', back?: (u: URL) => URL) {
    const url = await fed.begin(name, { purpose: 'sign-in', binding });
    const callback = await followToCallback(url, CALLBACK);
    return fed.complete(name, back ? back(callback) : callback, binding);
  }

  beforeAll(async () => {
    db = await migratedTestDatabase('federation_app', { entities, migrations });
    ds = db.ds;
    op = await startUpstreamOp({ redirectUris: [CALLBACK], clientId: 'federation-test', clientSecret: SECRET });
    standIn = await startStandIn({ clientId: 'federation-test', clientSecret: SECRET });
    fed = createFederationUseCases({
      uow: pgUnitOfWork(ds),
      stores: pgIdentityStores(ds.manager),
      directory: { findAccount: async (e) => [...users.values()].find((u) => u.email === e) ?? null },
      provisioning,
      rps: createUpstreams({ secretOf: async () => SECRET, presets: { googleDiscoveryUrl: standIn.discoveryUrl, github: standIn.github } }),
      callbackUrl: () => CALLBACK,
    });
  });

  afterAll(async () => {
    await op?.close();
    await standIn?.close();
    await db?.close();
  });

  it('just-in-time sign-up: a verified, trusted email; the identity linked; the next sign-in is the same user', async () => {
    const p = await provider({ defaultRoles: ['Viewer'] });
    const addr = email('jit');
    op.signInAs({ sub: `s-${randomUUID()}`, email: addr, emailVerified: true, givenName: 'Jo', familyName: 'It' });
    const first = await signIn(p.name);
    expect(first).toMatchObject({ kind: 'signed-in', amr: ['fed'], mfaSatisfied: false });
    const userId = (first as { userId: string }).userId;
    expect(users.get(userId)).toMatchObject({ email: addr, emailVerified: true, firstName: 'Jo', lastName: 'It', roles: ['Viewer'], password: false });
    expect(await fed.listOf(userId)).toEqual([expect.objectContaining({ providerId: p.id, issuer: op.issuer, providerName: p.name })]);
    expect(await signIn(p.name)).toMatchObject({ kind: 'signed-in', userId });
  });

  it('sign-up through an untrusted provider: the email is not verified here', async () => {
    const p = await provider({ trustEmailVerified: false });
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('untrusted'), emailVerified: true });
    const r = await signIn(p.name);
    expect(users.get((r as { userId: string }).userId)?.emailVerified).toBe(false);
  });

  it('auto-link: verified local × verified upstream × trusted provider', async () => {
    const p = await provider();
    const mine = local(email('auto'), true);
    op.signInAs({ sub: `s-${randomUUID()}`, email: mine.email, emailVerified: true });
    expect(await signIn(p.name)).toMatchObject({ kind: 'signed-in', userId: mine.userId });
    expect(await fed.listOf(mine.userId)).toHaveLength(1);
  });

  it('prove the local account, then link; a proof of another account links nothing', async () => {
    const p = await provider({ trustEmailVerified: false });
    const mine = local(email('prove'), true);
    op.signInAs({ sub: `s-${randomUUID()}`, email: mine.email, emailVerified: true });
    const r = await signIn(p.name);
    expect(r).toMatchObject({ kind: 'prove-local', pending: { userId: mine.userId, providerId: p.id } });
    const pending = (r as { pending: Parameters<FederationUseCases['linkAfterProof']>[0] }).pending;
    await expect(fed.linkAfterProof(pending, randomUUID())).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await fed.listOf(mine.userId)).toHaveLength(0);
    await fed.linkAfterProof(pending, mine.userId);
    expect(await signIn(p.name)).toMatchObject({ kind: 'signed-in', userId: mine.userId });
  });

  it('pre-hijack: an unverified local account (an attacker registered the address with a password) is refused and audited', async () => {
    const p = await provider();
    const planted = local(email('victim'), false);
    op.signInAs({ sub: `s-${randomUUID()}`, email: planted.email, emailVerified: true });
    const before = await refusals('local-email-unverified');
    expect(await signIn(p.name)).toEqual({ kind: 'refused', reason: 'local-email-unverified' });
    expect(await refusals('local-email-unverified')).toBe(before + 1);
    expect(await fed.listOf(planted.userId)).toHaveLength(0);
  });

  it('nOAuth: a linked identity that now claims another (verified) email still signs in as its own user', async () => {
    const p = await provider();
    const sub = `s-${randomUUID()}`;
    op.signInAs({ sub, email: email('attacker'), emailVerified: true });
    const attacker = (await signIn(p.name)) as { userId: string };
    const victim = local(email('victim'), true);
    op.signInAs({ sub, email: victim.email, emailVerified: true });
    expect(await signIn(p.name)).toMatchObject({ kind: 'signed-in', userId: attacker.userId });
    expect(await fed.listOf(victim.userId)).toHaveLength(0);
  });

  it('a forged state, a replayed callback and another browser are refused and audited (reason state)', async () => {
    const p = await provider();
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('state'), emailVerified: true });
    const before = await refusals('state');
    expect(await signIn(p.name, 'b', (u) => (u.searchParams.set('state', 'forged'), u))).toEqual({ kind: 'refused', reason: 'state' });
    const url = await fed.begin(p.name, { purpose: 'sign-in', binding: 'b' });
    const callback = await followToCallback(url, CALLBACK);
    expect(await fed.complete(p.name, callback, 'another-browser')).toEqual({ kind: 'refused', reason: 'state' });
    const url2 = await fed.begin(p.name, { purpose: 'sign-in', binding: 'b' });
    const cb2 = await followToCallback(url2, CALLBACK);
    expect((await fed.complete(p.name, cb2, 'b')).kind).toBe('signed-in');
    expect(await fed.complete(p.name, cb2, 'b')).toEqual({ kind: 'refused', reason: 'state' });
    expect(await refusals('state')).toBe(before + 3);
  });

  it.each([
    ['an ID token for another aud', { aud: 'someone-else' }, 'audience'],
    ['alg none', { algNone: true }, 'algorithm'],
    ['a wrong iss', { iss: 'https://evil.example' }, 'issuer'],
    ['an expired ID token', { expired: true }, 'expired'],
  ])('%s is refused and audited', async (_n, spoil, reason) => {
    const p = await provider({ discoveryUrl: standIn.discoveryUrl });
    standIn.signInAs({ sub: '77', email: email('spoil'), emailVerified: true });
    standIn.spoil(spoil);
    try {
      const before = await refusals(reason);
      expect(await signIn(p.name)).toEqual({ kind: 'refused', reason });
      expect(await refusals(reason)).toBe(before + 1);
    } finally {
      standIn.spoil({});
    }
  });

  it('GitHub: an unverified email is never used; with no verified one the sign-up is refused and audited', async () => {
    const p = await provider({ kind: 'github', discoveryUrl: null });
    const taken = local(email('gh'), true);
    standIn.signInAs({ sub: String(Date.now()), githubEmails: [{ email: taken.email, primary: true, verified: false }] });
    const before = await refusals('no-email');
    expect(await signIn(p.name)).toEqual({ kind: 'refused', reason: 'no-email' });
    expect(await refusals('no-email')).toBe(before + 1);
  });

  it('the upstream being down: begin answers UNAVAILABLE (audited), nothing stored', async () => {
    const p = await provider();
    op.setUp(false);
    try {
      await expect(fed.begin(p.name, { purpose: 'sign-in', binding: 'x' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      op.setUp(true);
    }
  });

  it('link from the account page; unlink, but never the last way in', async () => {
    const p = await provider({ allowSignUp: true });
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('only'), emailVerified: true });
    const only = (await signIn(p.name)) as { userId: string };
    const [one] = await fed.listOf(only.userId);
    await expect(fed.unlink(only.userId, one!.id, { userId: only.userId, administrator: false })).rejects.toMatchObject({ code: 'CONFLICT' });
    // A second provider linked from the account page: now either can go.
    const q = await provider();
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('second'), emailVerified: true });
    const url = await fed.begin(q.name, { purpose: 'link', binding: 'account-session', userId: only.userId });
    expect(await fed.complete(q.name, await followToCallback(url, CALLBACK), 'account-session')).toEqual({ kind: 'linked', userId: only.userId });
    expect(await fed.listOf(only.userId)).toHaveLength(2);
    await fed.unlink(only.userId, one!.id, { userId: only.userId, administrator: false });
    expect(await fed.listOf(only.userId)).toHaveLength(1);
    const [unlinked] = await ds.query<Array<{ n: string }>>('SELECT count(*) AS n FROM outbox_events WHERE subject = $1', [SUBJECTS.federatedIdentityUnlinked]);
    expect(Number(unlinked!.n)).toBeGreaterThanOrEqual(1);
  });

  it('two unlinks at once never take the last way in: one goes, the other is refused', async () => {
    const p = await provider({ allowSignUp: true });
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('racer'), emailVerified: true });
    const racer = (await signIn(p.name)) as { userId: string };
    const q = await provider();
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('racer2'), emailVerified: true });
    const url = await fed.begin(q.name, { purpose: 'link', binding: 'race-session', userId: racer.userId });
    expect(await fed.complete(q.name, await followToCallback(url, CALLBACK), 'race-session')).toEqual({ kind: 'linked', userId: racer.userId });
    const links = await fed.listOf(racer.userId);
    expect(links).toHaveLength(2);
    const outcomes = await Promise.allSettled(links.map((l) => fed.unlink(racer.userId, l.id, { userId: racer.userId, administrator: false })));
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'CONFLICT' } });
    expect(await fed.listOf(racer.userId)).toHaveLength(1);
  });

  it("the upstream OP's amr reaches the decision: a second factor there counts only with trustUpstreamMfa", async () => {
    const trusted = await provider({ trustUpstreamMfa: true });
    const untrusted = await provider();
    op.signInAs({ sub: `s-${randomUUID()}`, email: email('amr'), emailVerified: true, amr: ['pwd', 'mfa'] });
    expect(await signIn(trusted.name)).toMatchObject({ kind: 'signed-in', amr: ['fed', 'mfa'], mfaSatisfied: true });
    expect(await signIn(untrusted.name)).toMatchObject({ kind: 'signed-in', amr: ['fed'], mfaSatisfied: false });
  });

  it('upstream amr satisfies the second-factor policy only for a provider trusted for it', () => {
    expect(upstreamAmr({ trustUpstreamMfa: false }, ['pwd', 'mfa', 'otp'])).toEqual({ amr: ['fed'], mfaSatisfied: false });
    expect(upstreamAmr({ trustUpstreamMfa: true }, ['pwd'])).toEqual({ amr: ['fed'], mfaSatisfied: false });
    expect(upstreamAmr({ trustUpstreamMfa: true }, ['pwd', 'otp'])).toEqual({ amr: ['fed', 'mfa'], mfaSatisfied: true });
  });
});

import { type LinkDecision, type LinkingPolicy, type LocalMatch, type UpstreamFacts, decideLink } from './federation-linking';

const LOCAL = 'f3b2a9e4-1c1d-4a43-9d4e-6d7c1b0a2f11';
const policy = (trusted: boolean, over: Partial<LinkingPolicy> = {}): LinkingPolicy => ({ trustEmailVerified: trusted, allowSignUp: true, linking: 'verified-email', ...over });
const upstream = (verified: boolean, over: Partial<UpstreamFacts> = {}): UpstreamFacts => ({ email: 'ada@example.com', emailVerified: verified, ...over });
const local = (verified: boolean): LocalMatch => ({ userId: LOCAL, emailVerified: verified });

type Local = 'verified' | 'unverified' | 'none';
const localOf = (l: Local): LocalMatch | undefined => (l === 'none' ? undefined : local(l === 'verified'));

// The linking matrix of issue #40 item 4: local account × upstream email verified × provider trusted.
const MATRIX: Array<[name: string, l: Local, upVerified: boolean, trusted: boolean, expected: LinkDecision]> = [
  ['verified local × verified upstream × trusted: auto-link', 'verified', true, true, { kind: 'auto-link', userId: LOCAL }],
  ['verified local × verified upstream × untrusted: prove the local account', 'verified', true, false, { kind: 'prove-local', userId: LOCAL }],
  ['verified local × unverified upstream × trusted: prove the local account', 'verified', false, true, { kind: 'prove-local', userId: LOCAL }],
  ['verified local × unverified upstream × untrusted: prove the local account', 'verified', false, false, { kind: 'prove-local', userId: LOCAL }],
  ['unverified local × verified upstream × trusted: refused (pre-hijack)', 'unverified', true, true, { kind: 'refuse', reason: 'local-email-unverified' }],
  ['unverified local × verified upstream × untrusted: refused', 'unverified', true, false, { kind: 'refuse', reason: 'local-email-unverified' }],
  ['unverified local × unverified upstream × trusted: refused', 'unverified', false, true, { kind: 'refuse', reason: 'local-email-unverified' }],
  ['unverified local × unverified upstream × untrusted: refused', 'unverified', false, false, { kind: 'refuse', reason: 'local-email-unverified' }],
  ['no local × verified upstream × trusted: sign-up, email verified', 'none', true, true, { kind: 'sign-up', emailVerified: true }],
  ['no local × verified upstream × untrusted: sign-up, email not verified', 'none', true, false, { kind: 'sign-up', emailVerified: false }],
  ['no local × unverified upstream × trusted: sign-up, email not verified', 'none', false, true, { kind: 'sign-up', emailVerified: false }],
  ['no local × unverified upstream × untrusted: sign-up, email not verified', 'none', false, false, { kind: 'sign-up', emailVerified: false }],
];

describe('the linking matrix (12 cells)', () => {
  it.each(MATRIX)('%s', (_name, l, upVerified, trusted, expected) => {
    expect(decideLink(policy(trusted), upstream(upVerified), localOf(l))).toEqual(expected);
  });

  it('auto-links in exactly one cell', () => {
    expect(MATRIX.filter(([, l, v, t]) => decideLink(policy(t), upstream(v), localOf(l)).kind === 'auto-link')).toHaveLength(1);
  });
});

describe('attacks', () => {
  it('pre-hijack: an unverified local account with a password never gains a verified, trusted upstream identity (refused, whatever the linking mode)', () => {
    for (const linking of ['verified-email', 're-authenticate'] as const) {
      expect(decideLink(policy(true, { linking }), upstream(true), local(false))).toEqual({ kind: 'refuse', reason: 'local-email-unverified' });
    }
  });

  it('nOAuth: a token whose email is not the verified identity never matches an existing account on its own', () => {
    // An Entra-like tenant the attacker controls: email = the victim's, unverified or untrusted.
    const victim = local(true);
    expect(decideLink(policy(false), upstream(true, { email: 'victim@example.com' }), victim).kind).toBe('prove-local');
    expect(decideLink(policy(true), upstream(false, { email: 'victim@example.com' }), victim).kind).toBe('prove-local');
  });

  it('nOAuth: a linked identity signs in as its own user whatever email it now carries', () => {
    const other = 'a6a0b7c2-73b4-4d3f-8f55-0b9a4a7e9d01';
    expect(decideLink(policy(true), upstream(true, { linkedUserId: other, email: 'victim@example.com' }), local(true))).toEqual({ kind: 'sign-in', userId: other });
  });
});

describe('provider settings', () => {
  it('linking "re-authenticate" asks for the local account even in the auto-link cell', () => {
    expect(decideLink(policy(true, { linking: 're-authenticate' }), upstream(true), local(true))).toEqual({ kind: 'prove-local', userId: LOCAL });
  });

  it('linking "never" refuses any match (no second account with the same email either)', () => {
    expect(decideLink(policy(true, { linking: 'never' }), upstream(true), local(true))).toEqual({ kind: 'refuse', reason: 'linking-disabled' });
  });

  it('no sign-up unless allowed, and never without an email', () => {
    expect(decideLink(policy(true, { allowSignUp: false }), upstream(true), undefined)).toEqual({ kind: 'refuse', reason: 'sign-up-disabled' });
    expect(decideLink(policy(true), upstream(true, { email: undefined }), undefined)).toEqual({ kind: 'refuse', reason: 'no-email' });
  });
});

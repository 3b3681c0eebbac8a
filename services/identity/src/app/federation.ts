/**
 * Signing in with another identity provider (issue #40 items 2–5), independent of how the sign-in
 * page is drawn: `begin` stores a single-use attempt (the SHA-256 of its `state`, the nonce, the
 * PKCE verifier, the browser it is bound to) and answers the upstream's authorization URL;
 * `complete` takes the attempt back by the callback's `state` (a forged or replayed state finds
 * none), lets the relying party check the rest (infra/federation), and carries out the linking
 * matrix (domain/federation-linking.ts). Every refusal is audited (`identity.federation.refused`
 * with its reason); every link and unlink commits with its event (audit trail, webhooks).
 *
 * An upstream sign-in counts as the `fed` method; it satisfies our second-factor policy only when
 * the provider is configured `trustUpstreamMfa` and the upstream says a second factor was used
 * (`amr` has `mfa`, or two methods): then the session's amr also has `mfa`.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, event, sha256 } from '@iam/platform';
import type { AccountProvisioning, FederatedIdentity, UpstreamPurpose } from '../domain/federated-identities';
import { type LinkDecision, decideLink } from '../domain/federation-linking';
import type { IdentityProviderRecord } from '../domain/identity-providers';
import type { Directory, IdentityStores, UnitOfWork } from '../domain/ports';

/** What a sign-in through a provider proved, as the relying party hands it over. */
export interface VerifiedUpstream {
  readonly issuer: string;
  readonly subject: string;
  readonly email?: string;
  readonly emailVerified: boolean;
  readonly givenName?: string;
  readonly familyName?: string;
  readonly amr: readonly string[];
}

/** The relying party of one provider (infra/federation/upstream-client.ts); its errors carry a `reason`. */
export interface UpstreamRp {
  start(redirectUri: string, statePrefix?: string): Promise<{ url: URL; state: string; nonce: string; codeVerifier: string }>;
  finish(callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }, redirectUri: string): Promise<VerifiedUpstream>;
}

export interface UpstreamRps {
  clientFor(provider: IdentityProviderRecord): Promise<UpstreamRp>;
}

/** A link waiting for the user to prove the local account (password or passkey). Kept server side, with the sign-in it belongs to. */
export interface PendingLink {
  readonly providerId: string;
  readonly issuer: string;
  readonly subject: string;
  readonly email: string;
  /** The account that must be proven: only a sign-in as this user completes the link. */
  readonly userId: string;
}

export type UpstreamOutcome =
  | { readonly kind: 'signed-in'; readonly userId: string; readonly amr: readonly string[]; readonly mfaSatisfied: boolean }
  | { readonly kind: 'prove-local'; readonly pending: PendingLink; readonly providerName: string }
  | { readonly kind: 'linked'; readonly userId: string }
  | { readonly kind: 'refused'; readonly reason: string };

export interface ProviderButton {
  readonly name: string;
  readonly displayName: string;
  readonly kind: string;
  readonly iconUrl: string;
}

export interface LinkedIdentityView extends FederatedIdentity {
  readonly providerName: string;
  readonly providerDisplayName: string;
}

export interface FederationUseCases {
  /** The enabled providers, for the sign-in page's buttons. */
  buttons(): Promise<ProviderButton[]>;
  /** The upstream URL to send the browser to; NOT_FOUND for an unknown or disabled provider, UNAVAILABLE (audited) when it cannot be reached. */
  begin(providerName: string, a: { purpose: UpstreamPurpose; binding: string; userId?: string; statePrefix?: string }): Promise<URL>;
  /** The callback: `binding` is what the browser presents now (it must be the one `begin` stored). */
  complete(providerName: string, callbackUrl: URL, binding: string, ctx?: { ip?: string }): Promise<UpstreamOutcome>;
  /** Completes a pending link once the user proved `provedUserId` (the link's own user, else FORBIDDEN). */
  linkAfterProof(pending: PendingLink, provedUserId: string): Promise<void>;
  listOf(userId: string): Promise<LinkedIdentityView[]>;
  /** CONFLICT when it is the account's last way in (no password, no passkey, no other link). */
  unlink(userId: string, identityId: string, actor: { userId: string; administrator: boolean }): Promise<void>;
}

const ATTEMPT_SECONDS = 600;
const SECOND_FACTORS = new Set(['mfa']);

/** Our amr for an upstream sign-in, and whether it satisfies the second-factor policy. */
export function upstreamAmr(provider: Pick<IdentityProviderRecord, 'trustUpstreamMfa'>, amr: readonly string[]): { amr: string[]; mfaSatisfied: boolean } {
  const upstreamMfa = amr.some((a) => SECOND_FACTORS.has(a)) || new Set(amr).size >= 2;
  const mfaSatisfied = provider.trustUpstreamMfa && upstreamMfa;
  return { amr: mfaSatisfied ? ['fed', 'mfa'] : ['fed'], mfaSatisfied };
}

const reasonOf = (err: unknown): string => {
  const r = (err as { reason?: unknown }).reason;
  return typeof r === 'string' ? r : 'unavailable';
};

export function createFederationUseCases(deps: {
  uow: UnitOfWork<Pick<IdentityStores, 'federatedIdentities' | 'upstreamAttempts' | 'identityProviders'>>;
  stores: Pick<IdentityStores, 'identityProviders' | 'federatedIdentities' | 'passkeys'>;
  directory: Pick<Directory, 'findAccount'>;
  provisioning: AccountProvisioning;
  rps: UpstreamRps;
  /** The callback URL of a provider (registered at the upstream as its redirect URI). */
  callbackUrl: (providerName: string) => string;
}): FederationUseCases {
  const { uow, stores } = deps;

  async function live(name: string): Promise<IdentityProviderRecord | null> {
    const p = await stores.identityProviders.get(name);
    return p && p.enabled ? p : null;
  }

  async function refuse(provider: Pick<IdentityProviderRecord, 'id' | 'name'> | null, reason: string, extra: { userId?: string; ip?: string } = {}): Promise<UpstreamOutcome> {
    await uow.run(async (tx) => {
      await tx.publish([event(SUBJECTS.upstreamSignInRefused, { providerId: provider?.id ?? '', providerName: provider?.name ?? '', reason, userId: extra.userId ?? '', ip: extra.ip ?? '' })]);
    });
    return { kind: 'refused', reason };
  }

  async function link(provider: IdentityProviderRecord, userId: string, id: VerifiedUpstream, how: string, actorId: string): Promise<boolean> {
    return uow.run(async (tx) => {
      const made = await tx.federatedIdentities.link({ id: randomUUID(), userId, providerId: provider.id, issuer: id.issuer, subject: id.subject, email: id.email ?? '' });
      if (!made) return false;
      await tx.publish([
        event(SUBJECTS.federatedIdentityLinked, { userId, providerId: provider.id, providerName: provider.name, issuer: id.issuer, subject: id.subject, how, actorId }),
      ]);
      return true;
    });
  }

  async function decide(provider: IdentityProviderRecord, id: VerifiedUpstream, ip: string | undefined): Promise<UpstreamOutcome> {
    const linked = await stores.federatedIdentities.find(provider.id, id.issuer, id.subject);
    const account = !linked && id.email ? await deps.directory.findAccount(id.email) : null;
    const decision: LinkDecision = decideLink(
      provider,
      { linkedUserId: linked?.userId, email: id.email, emailVerified: id.emailVerified },
      account ? { userId: account.userId, emailVerified: account.emailVerified } : undefined,
    );
    const session = upstreamAmr(provider, id.amr);
    switch (decision.kind) {
      case 'sign-in':
        await stores.federatedIdentities.used(linked!.id, id.email ?? '');
        return { kind: 'signed-in', userId: decision.userId, ...session };
      case 'auto-link':
        if (!(await link(provider, decision.userId, id, 'auto-link', decision.userId))) return refuse(provider, 'already-linked', { ip });
        return { kind: 'signed-in', userId: decision.userId, ...session };
      case 'prove-local':
        return { kind: 'prove-local', providerName: provider.displayName, pending: { providerId: provider.id, issuer: id.issuer, subject: id.subject, email: id.email ?? '', userId: decision.userId } };
      case 'sign-up': {
        let userId: string;
        try {
          ({ userId } = await deps.provisioning.provisionUser({
            email: id.email!,
            firstName: id.givenName ?? id.email!.split('@')[0]!.slice(0, 50),
            lastName: id.familyName ?? '',
            emailVerified: decision.emailVerified,
            roles: provider.defaultRoles,
          }));
        } catch (err) {
          // Taken meanwhile (a concurrent sign-up or registration): nothing half-written here.
          if (err instanceof AppError && err.code === 'CONFLICT') return refuse(provider, 'email-taken', { ip });
          throw err;
        }
        if (!(await link(provider, userId, id, 'sign-up', userId))) return refuse(provider, 'already-linked', { userId, ip });
        return { kind: 'signed-in', userId, ...session };
      }
      case 'refuse':
        return refuse(provider, decision.reason, { ...(account ? { userId: account.userId } : {}), ip });
    }
  }

  return {
    async buttons() {
      return (await stores.identityProviders.listEnabled()).map((p) => ({ name: p.name, displayName: p.displayName, kind: p.kind, iconUrl: p.iconUrl }));
    },

    async begin(providerName, a) {
      const provider = await live(providerName);
      if (!provider) throw AppError.notFound('The identity provider does not exist.');
      let s: Awaited<ReturnType<UpstreamRp['start']>>;
      try {
        s = await (await deps.rps.clientFor(provider)).start(deps.callbackUrl(provider.name), a.statePrefix);
      } catch (err) {
        await refuse(provider, reasonOf(err), { ...(a.userId ? { userId: a.userId } : {}) });
        throw AppError.unavailable(`${provider.displayName} cannot be reached; try again shortly.`, err);
      }
      await uow.run(async (tx) => {
        await tx.upstreamAttempts.create(
          sha256(s.state),
          { providerId: provider.id, nonce: s.nonce, codeVerifier: s.codeVerifier, purpose: a.purpose, binding: a.binding, userId: a.userId ?? null },
          new Date(Date.now() + ATTEMPT_SECONDS * 1000),
        );
      });
      return s.url;
    },

    async complete(providerName, callbackUrl, binding, ctx = {}) {
      const provider = await stores.identityProviders.get(providerName);
      const state = callbackUrl.searchParams.get('state') ?? '';
      // Single use: a replayed callback, or one whose state we never issued, finds nothing.
      const attempt = state ? await uow.run((tx) => tx.upstreamAttempts.take(sha256(state))) : null;
      if (!provider || !attempt || attempt.providerId !== provider.id || attempt.binding !== binding) return refuse(provider, 'state', { ip: ctx.ip });
      if (!provider.enabled) return refuse(provider, 'disabled', { ip: ctx.ip });
      let id: VerifiedUpstream;
      try {
        const rp = await deps.rps.clientFor(provider);
        // The upstream's answer as it reached its redirect URI (the browser may have carried it on
        // to the interaction or the account page): the token request names that URI.
        const redirectUri = deps.callbackUrl(provider.name);
        const answered = new URL(redirectUri);
        for (const k of ['code', 'state', 'iss', 'error', 'error_description']) {
          const v = callbackUrl.searchParams.get(k);
          if (v !== null) answered.searchParams.set(k, v);
        }
        id = await rp.finish(answered, { state, nonce: attempt.nonce, codeVerifier: attempt.codeVerifier }, redirectUri);
      } catch (err) {
        return refuse(provider, reasonOf(err), { ...(attempt.userId ? { userId: attempt.userId } : {}), ip: ctx.ip });
      }
      if (attempt.purpose === 'link' && attempt.userId) {
        const linked = await stores.federatedIdentities.find(provider.id, id.issuer, id.subject);
        if (linked?.userId === attempt.userId) return { kind: 'linked', userId: attempt.userId };
        if (linked || !(await link(provider, attempt.userId, id, 'account', attempt.userId))) return refuse(provider, 'already-linked', { userId: attempt.userId, ip: ctx.ip });
        return { kind: 'linked', userId: attempt.userId };
      }
      return decide(provider, id, ctx.ip);
    },

    async linkAfterProof(pending, provedUserId) {
      if (pending.userId !== provedUserId) throw AppError.forbidden('The account signed in is not the one the link was for.');
      const provider = await stores.identityProviders.get(pending.providerId);
      if (!provider) throw AppError.notFound('The identity provider does not exist.');
      const ok = await link(provider, provedUserId, { issuer: pending.issuer, subject: pending.subject, email: pending.email, emailVerified: false, amr: [] }, 're-authenticated', provedUserId);
      if (!ok) {
        const existing = await stores.federatedIdentities.find(pending.providerId, pending.issuer, pending.subject);
        if (existing?.userId !== provedUserId) throw AppError.conflict('That identity is linked to another account.');
      }
    },

    async listOf(userId) {
      const links = await stores.federatedIdentities.listOf(userId);
      const providers = new Map<string, IdentityProviderRecord | null>();
      for (const l of links) if (!providers.has(l.providerId)) providers.set(l.providerId, await stores.identityProviders.get(l.providerId, { includeDeleted: true }));
      return links.map((l) => ({ ...l, providerName: providers.get(l.providerId)?.name ?? '', providerDisplayName: providers.get(l.providerId)?.displayName ?? '' }));
    },

    async unlink(userId, identityId, actor) {
      const links = await stores.federatedIdentities.listOf(userId);
      const target = links.find((l) => l.id === identityId);
      if (!target) throw AppError.notFound('The linked identity does not exist.');
      const lastWay = () => AppError.conflict('This is the only way to sign in to the account: set a password or add a passkey first.');
      const otherKinds = (await stores.passkeys.count(userId)) + ((await deps.provisioning.hasPassword(userId)) ? 1 : 0);
      if (links.length - 1 + otherKinds === 0) throw lastWay();
      const provider = await stores.identityProviders.get(target.providerId, { includeDeleted: true });
      await uow.run(async (tx) => {
        // Counted again under lock: two unlinks at once must not both take the last but one.
        if ((await tx.federatedIdentities.lockOf(userId)) - 1 + otherKinds <= 0) throw lastWay();
        const gone = await tx.federatedIdentities.unlink(identityId, userId);
        if (!gone) throw AppError.notFound('The linked identity does not exist.');
        await tx.publish([
          event(SUBJECTS.federatedIdentityUnlinked, {
            userId,
            providerId: gone.providerId,
            providerName: provider?.name ?? '',
            issuer: gone.issuer,
            subject: gone.subject,
            how: actor.administrator && actor.userId !== userId ? 'administrator' : 'account',
            actorId: actor.userId,
          }),
        ]);
      });
    },
  };
}

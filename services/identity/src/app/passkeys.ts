/**
 * Passkeys (WebAuthn Level 3, DESIGN §5) over @simplewebauthn/server: registration (user
 * verification required, discoverable credentials), naming, listing and removal by their owner,
 * and the assertions of a sign-in, as a first factor (passwordless: the options name no
 * credential, so they are the same for everyone) or as the second factor of an mfa token. The RP
 * ID is PUBLIC_URL's host unless WEBAUTHN_RP_ID names a parent domain; the origins PUBLIC_URL's
 * and WEBAUTHN_ORIGINS'. Every ceremony's challenge is single use and good for five
 * minutes. A registration's or a second factor's is stored and found again by the challenge the
 * authenticator signed (only its SHA-256 is stored; a user's newest five of each kind stay); a
 * passwordless sign-in's, asked for anonymously, is stored by nobody until an assertion of it
 * verifies (sign-in-challenge.ts). Events carry a short hash of the credential id, never the id
 * itself.
 */
import { randomUUID } from 'node:crypto';
import { SUBJECTS } from '@iam/contracts';
import { AppError, type Logger, event, sha256 } from '@iam/platform';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Principal } from '../domain/model';
import type { Directory, IdentityStores, PasskeyRecord, UnitOfWork, WebauthnPurpose } from '../domain/ports';
import { factorAddedEvent, noticeAccount } from './factor-notice';
import { checkSignInChallenge, issueSignInChallenge } from './sign-in-challenge';

export interface PasskeySettings {
  /** PUBLIC_URL's host name. */
  readonly rpId: string;
  /** The origins a ceremony may come from: PUBLIC_URL's, then WEBAUTHN_ORIGINS (config.ts). */
  readonly origins: readonly string[];
  readonly rpName: string;
  /** The key of the passwordless sign-in's challenges (sign-in-challenge.ts). */
  readonly challengeKey: Buffer;
}

export const WEBAUTHN_CHALLENGE_SECONDS = 300;
/**
 * A user's live challenges of one purpose (registration, second factor): each options call stores
 * one, so only the newest few stay (an older page's ceremony then has to start again).
 */
export const OUTSTANDING_CHALLENGES = 5;
export const PASSKEY_NAME_MAX = 64;
const CEREMONY_TIMEOUT_MS = 120_000;

export interface PasskeyView {
  readonly id: string;
  readonly name: string;
  /** 'singleDevice' or 'multiDevice' (synced across the user's devices). */
  readonly deviceType: string;
  readonly backedUp: boolean;
  readonly transports: readonly string[];
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

/** A verified assertion: whose passkey, and how it counts (RFC 8176: hwk bound to a device, swk synced). */
export interface PasskeyAssertion {
  readonly userId: string;
  readonly amr: 'hwk' | 'swk';
  readonly mfaChallengeId: string | null;
}

export interface PasskeyUseCases {
  registrationOptions(userId: string): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /**
   * VALIDATION for a response that does not verify (or a challenge not the user's); CONFLICT for a
   * credential registered already. The user is mailed about the new passkey (identity.factor.added).
   */
  register(userId: string, name: string, response: unknown): Promise<PasskeyView>;
  list(userId: string): Promise<PasskeyView[]>;
  count(userId: string): Promise<number>;
  /** NOT_FOUND for another user's or an unknown passkey. */
  rename(userId: string, id: string, name: string): Promise<PasskeyView>;
  /** NOT_FOUND as rename. The last factor takes the recovery codes with it. (Who may: my-factors.ts.) */
  remove(userId: string, id: string): Promise<void>;
  /** Options for a sign-in with a passkey alone: the same for everyone (no credential named). */
  signInOptions(): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Options for the second factor of an mfa challenge: the user's passkeys. */
  factorOptions(userId: string, mfaChallengeId: string): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /**
   * Verifies an assertion against the challenge it signed (used up) and the passkey it names;
   * null for anything wrong (malformed, unknown or used challenge, unknown credential, bad
   * signature, no user verification, a counter that went backwards). On success the counter and
   * backup state are stored.
   */
  verify(response: unknown, purpose: 'signin' | 'factor'): Promise<PasskeyAssertion | null>;
  /** The user id a passkey sign-in names (the credential's owner), for the lockout's accounting; null when unknown. */
  ownerOf(response: unknown): Promise<string | null>;
  /** Every passkey of the user removed (an administrator's reset), in the caller's transaction. */
  removeAllIn(tx: { passkeys: IdentityStores['passkeys'] }, userId: string): Promise<number>;
}

type Stores = Pick<IdentityStores, 'passkeys' | 'webauthnChallenges' | 'totp' | 'recoveryCodes'>;

/** The first 16 hex digits of the SHA-256 of a credential id: what the audit trail may show. */
export const credentialTag = (credentialId: Buffer): string => sha256(credentialId).toString('hex').slice(0, 16);

const b64url = (b: Buffer): string => b.toString('base64url');

/** The challenge a client says it signed (from clientDataJSON), or null for a malformed response. */
function signedChallenge(response: unknown): string | null {
  if (typeof response !== 'object' || response === null) return null;
  const inner = (response as { response?: unknown }).response;
  if (typeof inner !== 'object' || inner === null) return null;
  const cdj = (inner as { clientDataJSON?: unknown }).clientDataJSON;
  if (typeof cdj !== 'string' || cdj.length > 4_096) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cdj, 'base64url').toString('utf8'));
    const c = typeof parsed === 'object' && parsed !== null ? (parsed as { challenge?: unknown }).challenge : undefined;
    return typeof c === 'string' && c.length > 0 && c.length <= 128 ? c : null;
  } catch {
    return null;
  }
}

function credentialIdOf(response: unknown): Buffer | null {
  const id = typeof response === 'object' && response !== null ? (response as { id?: unknown }).id : undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > 1_400 || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  return Buffer.from(id, 'base64url');
}

const view = (p: PasskeyRecord): PasskeyView => ({
  id: p.id,
  name: p.name,
  deviceType: p.deviceType,
  backedUp: p.backedUp,
  transports: p.transports,
  createdAt: p.createdAt,
  lastUsedAt: p.lastUsedAt,
});

function cleanName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > PASSKEY_NAME_MAX) throw AppError.validation(`A name of 1 to ${PASSKEY_NAME_MAX} characters is required.`, [{ field: 'name', message: `must be 1 to ${PASSKEY_NAME_MAX} characters` }]);
  return n;
}

/** A user id as WebAuthn's user handle: its 16 bytes (no personal data). */
const userHandle = (userId: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));

export function createPasskeyUseCases(deps: {
  settings: PasskeySettings;
  uow: UnitOfWork<Stores>;
  stores: Stores;
  directory: Pick<Directory, 'principal'>;
  logger: Logger;
}): PasskeyUseCases {
  const { settings: s, uow, stores } = deps;
  // Loaded at the first ceremony, not at start: about 23 MiB of RSS a process that never sees a
  // passkey would keep (issue #43, idle memory).
  const load = () => import('@simplewebauthn/server');
  let loaded: ReturnType<typeof load> | undefined;
  const webauthn = (): ReturnType<typeof load> => (loaded ??= load());

  /** Stores a ceremony's challenge; the user's older ones of the purpose beyond the newest few go. */
  async function remember(challenge: string, purpose: WebauthnPurpose, userId: string | null, mfaChallengeId: string | null): Promise<void> {
    await stores.webauthnChallenges.create(
      {
        challengeHash: sha256(challenge),
        purpose,
        userId,
        mfaChallengeId,
        expiresAt: new Date(Date.now() + WEBAUTHN_CHALLENGE_SECONDS * 1000),
      },
      { keep: OUTSTANDING_CHALLENGES },
    );
  }

  async function owned(userId: string, id: string): Promise<PasskeyRecord> {
    const p = (await stores.passkeys.listOf(userId)).find((k) => k.id === id);
    if (!p) throw AppError.notFound('No such passkey.');
    return p;
  }

  const fail = (message: string) => AppError.validation(message, [{ field: 'response', message: 'did not verify' }]);

  return {
    async registrationOptions(userId) {
      const principal: Principal | null = await deps.directory.principal(userId);
      if (!principal) throw AppError.notFound('No such user.');
      const existing = await stores.passkeys.listOf(userId);
      const { generateRegistrationOptions } = await webauthn();
      const options = await generateRegistrationOptions({
        rpName: s.rpName,
        rpID: s.rpId,
        userName: principal.email,
        userDisplayName: `${principal.firstName} ${principal.lastName}`.trim() || principal.email,
        userID: userHandle(userId),
        attestationType: 'none',
        timeout: CEREMONY_TIMEOUT_MS,
        excludeCredentials: existing.map((p) => ({ id: b64url(p.credentialId), transports: p.transports as AuthenticatorTransportFuture[] })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await remember(options.challenge, 'register', userId, null);
      return options;
    },

    async register(userId, name, response) {
      const n = cleanName(name);
      const challenge = signedChallenge(response);
      const taken = challenge ? await stores.webauthnChallenges.take(sha256(challenge), 'register') : null;
      if (!challenge || !taken || taken.userId !== userId) throw fail('The passkey could not be registered: start again.');
      const { verifyRegistrationResponse } = await webauthn();
      let info;
      try {
        const r = await verifyRegistrationResponse({
          response: response as RegistrationResponseJSON,
          expectedChallenge: challenge,
          expectedOrigin: [...s.origins],
          expectedRPID: s.rpId,
          requireUserVerification: true,
        });
        if (!r.verified) throw new Error('not verified');
        info = r.registrationInfo;
      } catch (err) {
        deps.logger.info({ err: err instanceof Error ? err.message : String(err) }, 'passkey registration refused');
        throw fail('The passkey could not be registered: start again.');
      }
      const credentialId = Buffer.from(info.credential.id, 'base64url');
      const id = randomUUID();
      const account = await noticeAccount(deps.directory, userId);
      await uow.run(async (tx) => {
        const added = await tx.passkeys.add({
          id,
          userId,
          credentialId,
          publicKey: Buffer.from(info.credential.publicKey),
          counter: info.credential.counter,
          transports: info.credential.transports ?? [],
          deviceType: info.credentialDeviceType,
          backedUp: info.credentialBackedUp,
          aaguid: info.aaguid,
          name: n,
        });
        if (!added) throw AppError.conflict('This passkey is registered already.');
        await tx.publish([
          event(SUBJECTS.mfaEnrolled, { userId, factor: 'webauthn', failures: 0, reason: '', recoveryCodesLeft: 0, credential: credentialTag(credentialId), name: n }),
          factorAddedEvent(account, 'passkey', n),
        ]);
      });
      return view(await owned(userId, id));
    },

    list: async (userId) => (await stores.passkeys.listOf(userId)).map(view),

    count: (userId) => stores.passkeys.count(userId),

    async rename(userId, id, name) {
      const n = cleanName(name);
      const before = await owned(userId, id);
      await uow.run(async (tx) => {
        if (!(await tx.passkeys.rename(id, userId, n))) throw AppError.notFound('No such passkey.');
        await tx.publish([
          event(SUBJECTS.mfaEnrolled, { userId, factor: 'webauthn', failures: 0, reason: `renamed from ${before.name}`, recoveryCodesLeft: 0, credential: credentialTag(before.credentialId), name: n }),
        ]);
      });
      return view(await owned(userId, id));
    },

    async remove(userId, id) {
      const p = await owned(userId, id);
      await uow.run(async (tx) => {
        if (!(await tx.passkeys.remove(id, userId))) throw AppError.notFound('No such passkey.');
        // Recovery codes back a factor up; with none left they go too.
        if ((await tx.passkeys.count(userId)) === 0 && !(await tx.totp.get(userId))?.active) await tx.recoveryCodes.removeAll(userId);
        await tx.publish([
          event(SUBJECTS.mfaRemoved, { userId, factor: 'webauthn', failures: 0, reason: '', recoveryCodesLeft: 0, credential: credentialTag(p.credentialId), name: p.name }),
        ]);
      });
    },

    async signInOptions() {
      const { generateAuthenticationOptions } = await webauthn();
      const challenge = issueSignInChallenge(s.challengeKey, new Date(Date.now() + WEBAUTHN_CHALLENGE_SECONDS * 1000));
      return generateAuthenticationOptions({ rpID: s.rpId, allowCredentials: [], userVerification: 'required', timeout: CEREMONY_TIMEOUT_MS, challenge });
    },

    async factorOptions(userId, mfaChallengeId) {
      const keys = await stores.passkeys.listOf(userId);
      const { generateAuthenticationOptions } = await webauthn();
      const options = await generateAuthenticationOptions({
        rpID: s.rpId,
        allowCredentials: keys.map((p) => ({ id: b64url(p.credentialId), transports: p.transports as AuthenticatorTransportFuture[] })),
        userVerification: 'required',
        timeout: CEREMONY_TIMEOUT_MS,
      });
      await remember(options.challenge, 'factor', userId, mfaChallengeId);
      return options;
    },

    async verify(response, purpose) {
      const challenge = signedChallenge(response);
      const credentialId = credentialIdOf(response);
      if (!challenge || !credentialId) return null;
      // A sign-in's challenge is checked here and spent once the assertion verifies; the others are taken now.
      const signInUntil = purpose === 'signin' ? checkSignInChallenge(s.challengeKey, challenge, new Date()) : null;
      const taken = purpose === 'signin' ? signInUntil && { userId: null, mfaChallengeId: null } : await stores.webauthnChallenges.take(sha256(challenge), purpose);
      if (!taken) return null;
      const p = await stores.passkeys.findByCredentialId(credentialId);
      if (!p || (taken.userId !== null && taken.userId !== p.userId)) return null;
      const { verifyAuthenticationResponse } = await webauthn();
      let info;
      try {
        const r = await verifyAuthenticationResponse({
          response: response as AuthenticationResponseJSON,
          expectedChallenge: challenge,
          expectedOrigin: [...s.origins],
          expectedRPID: s.rpId,
          credential: { id: b64url(p.credentialId), publicKey: new Uint8Array(p.publicKey), counter: p.counter, transports: p.transports as AuthenticatorTransportFuture[] },
          requireUserVerification: true,
        });
        if (!r.verified) return null;
        info = r.authenticationInfo;
      } catch (err) {
        deps.logger.info({ err: err instanceof Error ? err.message : String(err) }, 'passkey assertion refused');
        return null;
      }
      if (signInUntil && !(await stores.webauthnChallenges.spend(sha256(challenge), signInUntil))) return null;
      if (!(await stores.passkeys.used(p.id, info.newCounter, info.credentialBackedUp))) {
        deps.logger.warn({ passkey: p.id }, 'passkey signature counter went backwards (a cloned authenticator?): refused');
        return null;
      }
      return { userId: p.userId, amr: info.credentialDeviceType === 'multiDevice' || info.credentialBackedUp ? 'swk' : 'hwk', mfaChallengeId: taken.mfaChallengeId };
    },

    async ownerOf(response) {
      const credentialId = credentialIdOf(response);
      if (!credentialId) return null;
      return (await stores.passkeys.findByCredentialId(credentialId))?.userId ?? null;
    },

    removeAllIn: (tx, userId) => tx.passkeys.removeAll(userId),
  };
}

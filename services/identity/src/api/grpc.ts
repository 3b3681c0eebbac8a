/** gRPC handlers of IdentityService: proto in, use cases, proto out. */
import { identityV1 } from '@iam/contracts';
import { ANY_CALLER, type AccessClaims, AppError, type HandlerDeps, type ServiceBinding, bindService } from '@iam/platform';
import type { AccessTokenUseCases } from '../app/access-tokens';
import type { AccountAccess } from '../app/account-access';
import type { AuthUseCases } from '../app/auth';
import type { EmailActionUseCases } from '../app/email-actions';
import type { ImportTotpOutcome, ImportedTotp } from '../app/import-totp';
import type { MyFactorUseCases } from '../app/my-factors';
import type { PasskeyView } from '../app/passkeys';
import { INVALID_PASSKEY } from '../app/signin/strategies/passkey';
import type { SignInFlow } from '../app/signin/flow';
import type { RestSignIn, RestSignInResult } from '../app/signin/rest';
import type { FactorInput } from '../app/signin/strategy';
import { totpEnrolmentOf } from '../app/signin/strategies/totp';
import type { SessionUseCases, SessionView } from '../app/sessions';
import type { Principal, TokenPair } from '../domain/model';
import type { PublishedKeys } from '../domain/ports';

const toClaims = (c: AccessClaims): identityV1.Claims => ({
  sub: c.sub,
  jti: c.jti,
  iss: c.iss,
  aud: [...c.aud],
  iat: c.iat,
  nbf: c.nbf,
  exp: c.exp,
  email: c.email,
  roles: [...c.roles],
  permissions: [...c.permissions],
  sid: c.sid ?? '',
  clientId: c.clientId ?? '',
  amr: [...(c.amr ?? [])],
  authTime: c.authTime ?? 0,
  cnfJkt: c.cnfJkt ?? '',
  scope: c.scope ?? '',
});

const userSummary = (p: Principal): identityV1.UserSummary => ({ id: p.userId, firstName: p.firstName, lastName: p.lastName, email: p.email, roles: [...p.roles] });
const signedIn = (r: { tokens: TokenPair; principal: Principal }): identityV1.LoginResponse => ({ tokens: r.tokens, user: userSummary(r.principal), mfa: undefined });
/** A REST sign-in's answer: its tokens (counted as a grant), or the challenge of its next step. */
const answered = (res: RestSignInResult, granted: (a: identityV1.LoginResponse) => identityV1.LoginResponse): identityV1.LoginResponse =>
  res.mfa ? { tokens: undefined, user: undefined, mfa: { ...res.mfa, methods: [...res.mfa.methods] } } : granted(signedIn(res));
const sessionOut = (s: SessionView): identityV1.Session => ({ id: s.id, device: s.device, userAgent: s.userAgent, ip: s.ip, createdAt: s.createdAt, lastUsedAt: s.lastUsedAt, current: s.current, amr: [...s.amr] });

/** A WebAuthn JSON document from the gateway (VALIDATION when it is not a JSON object). */
function webauthnJson(json: string, field: string): unknown {
  try {
    const v: unknown = JSON.parse(json);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v;
  } catch {
    // the same refusal below
  }
  throw AppError.validation('A WebAuthn response (JSON object) is expected.', [{ field, message: 'must be a WebAuthn response' }]);
}

/** Exactly one of code, recovery_code, webauthn_json or new_passkey_json (proto3: absent is ''), as the strategy's input. */
function factorOf(r: identityV1.CompleteMfaRequest): FactorInput {
  const given = [r.code, r.recoveryCode, r.webauthnJson, r.newPasskeyJson, r.newPassword].filter((v) => v !== '').length;
  if (given !== 1) throw AppError.validation('Send exactly one of code, recoveryCode, webauthn, passkey or newPassword.');
  if (r.newPasskeyJson !== '') return { method: 'webauthn', name: r.newPasskeyName || 'Passkey', registration: webauthnJson(r.newPasskeyJson, 'passkey.response') };
  if (r.webauthnJson !== '') return { method: 'webauthn', response: webauthnJson(r.webauthnJson, 'webauthn') };
  return r.code !== '' ? { method: 'totp', code: r.code } : { method: 'recovery_code', code: r.recoveryCode };
}

const passkeyOut = (p: PasskeyView): identityV1.Passkey => ({
  id: p.id,
  name: p.name,
  deviceType: p.deviceType,
  backedUp: p.backedUp,
  transports: [...p.transports],
  createdAt: p.createdAt,
  lastUsedAt: p.lastUsedAt ?? undefined,
});

export function identityGrpc(
  deps: {
    auth: AuthUseCases;
    /** The REST sign-in (it drives the sign-in flow) and the flow's options. */
    signIn: RestSignIn;
    flow: Pick<SignInFlow, 'options'>;
    accessTokens: AccessTokenUseCases;
    emailActions: EmailActionUseCases;
    keys: PublishedKeys;
    myFactors: MyFactorUseCases;
    access: AccountAccess;
    sessions: SessionUseCases;
    /** Tokens handed out over REST (the token-grant counter): rest_sign_in, rest_refresh. */
    granted?: (grantType: 'rest_sign_in' | 'rest_refresh') => void;
    /** The directory's bulk import: a TOTP factor with the source system's secret (app/import-totp.ts). */
    importTotp: (t: ImportedTotp) => Promise<ImportTotpOutcome>;
  },
  h: HandlerDeps,
): ServiceBinding[] {
  const { auth, signIn, flow, accessTokens, emailActions, keys, myFactors, access, sessions } = deps;
  const granted = <T>(grantType: 'rest_sign_in' | 'rest_refresh', answer: T): T => (deps.granted?.(grantType), answer);
  /** The signed-in caller of a "me" call: its token verified here (a JWT's signature, an opaque one's record; expiry, denylist). */
  const me = (accessToken: string) => accessTokens.validate(accessToken);
  /** The caller of a call on the account's security (sessions, password, email): a first-party token (account-access.ts). */
  const firstParty = async (accessToken: string) => {
    const c = await me(accessToken);
    await access.firstParty(c);
    return c;
  };
  return [
    bindService(
      identityV1.IdentityServiceService,
      {
        login: async (r) => answered(await signIn.start({ method: 'password', email: r.email, password: r.password }), (a) => granted('rest_sign_in', a)),
        refresh: async (r) => granted('rest_refresh', await auth.refresh(r.refreshToken)),
        // Every session of the account ends, as "sign out everywhere" ends them (spec: the token and every refresh token).
        revoke: async (r) => (await sessions.revoke(await me(r.accessToken)), {}),
        validateToken: async (r) => ({ claims: toClaims(await accessTokens.validate(r.accessToken)) }),
        introspect: async (r) => {
          const c = await accessTokens.introspect(r.token);
          return c ? { active: true, claims: toClaims(c) } : { active: false, claims: undefined };
        },
        getJwks: async () => ({
          keys: (await keys.jwks()).map((k) => ({ kid: k.kid, kty: k.kty, alg: k.alg, use: k.use, crv: k.crv ?? '', x: k.x ?? '', y: k.y ?? '', n: k.n ?? '', e: k.e ?? '' })),
        }),
        listRevokedTokens: async () => auth.revokedTokens(),
        requestPasswordReset: async (r) => (await emailActions.requestPasswordReset(r.email), {}),
        confirmPasswordReset: async (r) => (await emailActions.confirmPasswordReset(r.token, r.newPassword), {}),
        requestEmailVerification: async (r) => (await emailActions.requestEmailVerification(r.userId), {}),
        confirmEmailVerification: async (r) => (await emailActions.confirmEmailVerification(r.token), {}),
        // A factor, or (the new-password step) the new password: tokens, or the next step's challenge.
        completeMfa: async (r) => {
          const onlyPassword = r.newPassword !== '' && `${r.code}${r.recoveryCode}${r.webauthnJson}${r.newPasskeyJson}` === '';
          const res = onlyPassword ? await signIn.changePassword(r.mfaToken, r.newPassword) : await signIn.answer(r.mfaToken, factorOf(r));
          return answered(res, (a) => granted('rest_sign_in', a));
        },
        enrolWithMfaToken: async (r) => totpEnrolmentOf(await flow.options('totp', { mfaToken: r.mfaToken, stage: 'enrol' })),
        getMfaStatus: async (r) => myFactors.status(await me(r.accessToken)),
        startTotp: async (r) => myFactors.startTotp(await me(r.accessToken)),
        activateTotp: async (r) => (await myFactors.activateTotp(await me(r.accessToken), r.code), {}),
        removeTotp: async (r) => (await myFactors.removeTotp(await me(r.accessToken)), {}),
        newRecoveryCodes: async (r) => ({ codes: await myFactors.newRecoveryCodes(await me(r.accessToken)) }),
        passkeyRegistrationOptions: async (r) => ({ json: JSON.stringify(await myFactors.passkeyOptions(await me(r.accessToken))) }),
        registerPasskey: async (r) => passkeyOut(await myFactors.registerPasskey(await me(r.accessToken), r.name, webauthnJson(r.responseJson, 'response'))),
        listPasskeys: async (r) => ({ passkeys: (await myFactors.listPasskeys(await me(r.accessToken))).map(passkeyOut) }),
        renamePasskey: async (r) => passkeyOut(await myFactors.renamePasskey(await me(r.accessToken), r.passkeyId, r.name)),
        removePasskey: async (r) => (await myFactors.removePasskey(await me(r.accessToken), r.passkeyId), {}),
        passkeySignInOptions: async () => ({ json: JSON.stringify(await flow.options('webauthn')) }),
        passkeySignIn: async (r) => {
          const res = await signIn.start({ method: 'webauthn', response: webauthnJson(r.responseJson, 'response') });
          // A passkey alone is multi-factor: never a challenge.
          if (!res.tokens) throw new AppError('UNAUTHENTICATED', INVALID_PASSKEY, { reason: 'identity.invalid_passkey' });
          return granted('rest_sign_in', signedIn(res));
        },
        mfaWebauthnOptions: async (r) => ({ json: JSON.stringify(await flow.options('webauthn', { mfaToken: r.mfaToken, stage: 'second' })) }),
        mfaPasskeyEnrolmentOptions: async (r) => ({ json: JSON.stringify(await flow.options('webauthn', { mfaToken: r.mfaToken, stage: 'enrol' })) }),
        endUserSession: async (r) => (await sessions.endOneOf(r.userId, r.sessionId), { ended: 1 }),
        listMySessions: async (r) => {
          const c = await firstParty(r.accessToken);
          return { sessions: (await sessions.list(c.sub, c.sid)).map(sessionOut) };
        },
        // The account page's password and email changes ask this first: a third party's token stops here.
        verifyMyPassword: async (r) => (await auth.verifyPassword((await firstParty(r.accessToken)).sub, r.password), {}),
        endMySession: async (r) => (await sessions.end((await firstParty(r.accessToken)).sub, r.sessionId), { ended: 1 }),
        endAllMySessions: async (r) => ({ ended: await sessions.endAllMine((await firstParty(r.accessToken)).sub) }),
        endMyOtherSessions: async (r) => {
          const c = await firstParty(r.accessToken);
          return { ended: await sessions.endOthers(c.sub, c.sid) };
        },
        listUserSessions: async (r) => ({ sessions: (await sessions.listOf(r.userId)).map(sessionOut) }),
        endUserSessions: async (r) => ({ ended: await sessions.endAllOf(r.userId) }),
        getAccountSecurity: async (r) => {
          const s = await sessions.security(r.userId);
          return { locked: s.locked, lockedUntil: s.lockedUntil ?? undefined, failedAttempts: s.failedAttempts, mfa: s.mfa };
        },
        unlockAccount: async (r) => (await sessions.unlock(r.userId), {}),
        resetSecondFactors: async (r) => (await sessions.resetFactors(r.userId, r.reason), {}),
        importTotp: async (r) => ({ outcome: await deps.importTotp({ userId: r.userId, secret: r.secret, algorithm: r.algorithm, digits: r.digits, period: r.period }) }),
      },
      h,
      // Token checks and the JWKS are for any internal caller (@iam/identity-client); the rest, the gateway's.
      // ImportTotp: the directory's bulk import only.
      { default: ['gateway'], validateToken: ANY_CALLER, introspect: ANY_CALLER, getJwks: ANY_CALLER, importTotp: ['directory'] },
    ),
  ];
}

/** gRPC handlers of IdentityService: proto in, use cases, proto out. */
import { identityV1 } from '@iam/contracts';
import { ANY_CALLER, type AccessClaims, type HandlerDeps, type ServiceBinding, bindService } from '@iam/platform';
import type { AuthUseCases } from '../app/auth';
import type { EmailActionUseCases } from '../app/email-actions';
import type { PublishedKeys } from '../domain/ports';

const toClaims = (c: AccessClaims): identityV1.Claims => ({ ...c, aud: [...c.aud], roles: [...c.roles], permissions: [...c.permissions] });

export function identityGrpc(deps: { auth: AuthUseCases; emailActions: EmailActionUseCases; keys: PublishedKeys }, h: HandlerDeps): ServiceBinding[] {
  const { auth, emailActions, keys } = deps;
  return [
    bindService(
      identityV1.IdentityServiceService,
      {
        login: async (r) => {
          const { tokens: t, principal: p } = await auth.login(r.email, r.password);
          return {
            tokens: t,
            user: { id: p.userId, firstName: p.firstName, lastName: p.lastName, email: p.email, roles: [...p.roles] },
          };
        },
        refresh: async (r) => auth.refresh(r.refreshToken),
        revoke: async (r) => (await auth.revoke(r.accessToken), {}),
        validateToken: async (r) => ({ claims: toClaims(await auth.validate(r.accessToken)) }),
        introspect: async (r) => {
          const c = await auth.introspect(r.token);
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
      },
      h,
      // Token checks and the JWKS are for any internal caller (@iam/identity-client); the rest, the gateway's.
      { default: ['gateway'], validateToken: ANY_CALLER, introspect: ANY_CALLER, getJwks: ANY_CALLER },
    ),
  ];
}

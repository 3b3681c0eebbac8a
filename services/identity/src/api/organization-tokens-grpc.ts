/** OrganizationTokenService: the REST organization-token exchange (the gateway's `POST /api/v1/auth/organization-token`). */
import { organizationTokensV1 } from '@iam/contracts';
import { type HandlerDeps, type ServiceBinding, bindService } from '@iam/platform';
import type { OrganizationTokenUseCases } from '../app/organization-tokens';

export function organizationTokensGrpc(uc: OrganizationTokenUseCases, deps: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      organizationTokensV1.OrganizationTokenServiceService,
      {
        exchangeOrganizationToken: async (r) => {
          const scope = r.scope.trim() ? r.scope.trim().split(/\s+/) : undefined;
          const t = await uc.exchange(r.refreshToken, { id: r.organizationId }, scope);
          return { accessToken: t.token, tokenType: 'Bearer', expiresIn: t.expiresIn, organizationId: t.organizationId, organizationSlug: t.organizationSlug, permissions: [...t.permissions] };
        },
      },
      deps,
      ['gateway'],
    ),
  ];
}

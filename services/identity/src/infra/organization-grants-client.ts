/** The directory's OrganizationAccessService over gRPC: what a member holds in an organization, for organization tokens. */
import type { ChannelCredentials } from '@grpc/grpc-js';
import { organizationsV1 } from '@iam/contracts';
import { type CallSigner, type Metrics, createGrpcClient } from '@iam/platform';
import type { OrganizationGrants } from '../app/organization-tokens';

export function grpcOrganizationGrants(target: string, metrics: Metrics, signer: CallSigner, credentials?: ChannelCredentials): OrganizationGrants & { close(): void } {
  const client = createGrpcClient(organizationsV1.OrganizationAccessServiceService, { target, assert: { signer, to: 'directory' }, metrics, credentials, defaultDeadlineMs: 10_000 });
  return {
    async grant(userId, organization) {
      const r = await client.call.getOrganizationGrant({ userId, organizationId: organization.id ?? '', organizationSlug: organization.slug ?? '' });
      return r.member ? { organizationId: r.organizationId, organizationSlug: r.organizationSlug, roles: r.roles, permissions: r.permissions } : null;
    },
    async organizationsOf(userId) {
      const r = await client.call.listUserOrganizations({ userId });
      return r.grants.map((g) => ({ organizationId: g.organizationId, organizationSlug: g.organizationSlug, roles: g.roles, permissions: g.permissions }));
    },
    close: () => client.close(),
  };
}

/** The directory's use cases, as the composition root (service.ts) builds them and the gRPC handlers call them. */
import type { Permission, Role } from '../domain/model';
import type { AccessUseCases } from './access';
import type { CredentialUseCases } from './credentials';
import type { ImportUseCases } from './import-users';
import type { LinkUseCases } from './links';
import type { DomainUseCases } from './domains';
import type { InvitationUseCases } from './invitations';
import type { OrganizationRoleUseCases } from './organization-roles';
import type { OrganizationUseCases } from './organizations';
import type { ProvisioningUseCases } from './provisioning';
import type { NamedUseCases } from './roles';
import type { ScimConnectionUseCases } from './scim-connections';
import type { ScimServer } from './scim/handler';
import type { UserUseCases } from './users';

export interface DirectoryUseCases {
  readonly users: UserUseCases;
  readonly roles: NamedUseCases<Role>;
  readonly permissions: NamedUseCases<Permission>;
  readonly links: LinkUseCases;
  readonly credentials: CredentialUseCases;
  /** Accounts made by a sign-in through another identity provider (identity only). */
  readonly provisioning: ProvisioningUseCases;
  readonly access: AccessUseCases;
  readonly organizations: OrganizationUseCases;
  readonly organizationRoles: OrganizationRoleUseCases;
  readonly invitations: InvitationUseCases;
  readonly domains: DomainUseCases;
  readonly imports: ImportUseCases;
  /** SCIM connections of organizations (issue #42). */
  readonly scimConnections: ScimConnectionUseCases;
  /** The SCIM 2.0 server (the gateway passes /scim/v2/{organizationId}/… through). */
  readonly scim: ScimServer;
}

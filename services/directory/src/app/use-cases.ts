/** The directory's use cases, as the composition root (service.ts) builds them and the gRPC handlers call them. */
import type { Permission, Role } from '../domain/model';
import type { AccessUseCases } from './access';
import type { CredentialUseCases } from './credentials';
import type { ImportUseCases } from './import-users';
import type { LinkUseCases } from './links';
import type { NamedUseCases } from './roles';
import type { UserUseCases } from './users';

export interface DirectoryUseCases {
  readonly users: UserUseCases;
  readonly roles: NamedUseCases<Role>;
  readonly permissions: NamedUseCases<Permission>;
  readonly links: LinkUseCases;
  readonly credentials: CredentialUseCases;
  readonly access: AccessUseCases;
  readonly imports: ImportUseCases;
}

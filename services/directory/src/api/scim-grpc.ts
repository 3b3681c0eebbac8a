/** The ScimService's gRPC handler: the gateway's SCIM request in, the SCIM answer out (directory/v1/scim.proto). */
import { scimV1 } from '@iam/contracts';
import { type HandlerDeps, type ServiceBinding, bindService } from '@iam/platform';
import type { DirectoryUseCases } from '../app/use-cases';

export function scimGrpc(uc: Pick<DirectoryUseCases, 'scim'>, deps: HandlerDeps): ServiceBinding[] {
  return [
    bindService(
      scimV1.ScimServiceService,
      {
        handle: async (req) => {
          const r = await uc.scim.handle({ ...req, ifMatch: req.ifMatch || undefined });
          return { status: r.status, body: r.body ? JSON.stringify(r.body) : '', etag: r.etag ?? '', location: r.location ?? '' };
        },
      },
      deps,
      // The gateway alone: the SCIM client's own token is checked by the handler.
      ['gateway'],
    ),
  ];
}

/// <reference types="jest" />
/**
 * A SCIM client over the directory's SCIM server (the use case the gateway's gRPC call reaches),
 * for the tests: an organization with a connection of its own, requests as the gateway passes
 * them through, and the answers parsed.
 */
import type { ScimResult } from '../app/scim/scope';
import type { DirectoryFixture } from './app-fixture';
import { unique } from './app-fixture';

export interface ScimAnswer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a SCIM document, read by the tests' expectations
  readonly body: any;
  readonly etag?: string;
  readonly location?: string;
}

export interface ScimClient {
  readonly organizationId: string;
  readonly connectionId: string;
  readonly token: string;
  call(method: string, path: string, opts?: { body?: unknown; raw?: string; query?: Record<string, string>; ifMatch?: string; token?: string; organizationId?: string }): Promise<ScimAnswer>;
}

const parsed = (r: ScimResult): ScimAnswer => ({ status: r.status, body: r.body === undefined ? undefined : JSON.parse(JSON.stringify(r.body)), etag: r.etag, location: r.location });

/** A new organization (made by the fixture's Administrator) and a SCIM connection of it. */
export async function scimClient(fx: DirectoryFixture): Promise<ScimClient> {
  const org = await fx.uc.organizations.create(fx.admin, { name: 'Scim Co', slug: `scim-${unique()}` });
  const made = await fx.uc.scimConnections.create(fx.admin, org.id, { name: 'Entra ID' });
  return {
    organizationId: org.id,
    connectionId: made.connection.id,
    token: made.token,
    async call(method, path, opts = {}) {
      const organizationId = opts.organizationId ?? org.id;
      const r = await fx.uc.scim.handle({
        organizationId,
        token: opts.token ?? made.token,
        method,
        path,
        query: opts.query ?? {},
        body: opts.raw ?? (opts.body === undefined ? '' : JSON.stringify(opts.body)),
        ifMatch: opts.ifMatch,
        baseUrl: `https://iam.example/scim/v2/${organizationId}`,
      });
      return parsed(r);
    },
  };
}

export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/// <reference types="jest" />
/**
 * A SCIM client over the directory's SCIM server (the use case the gateway's gRPC call reaches),
 * for the tests: an organization with a verified domain and a connection of its own, requests as
 * the gateway passes them through, and the answers parsed.
 */
import { challengeName } from '../app/domains';
import type { ScimResult } from '../app/scim/scope';
import type { OrganizationDomain } from '../domain/organizations';
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
  /** The organization's first verified domain: the emails it provisions are on its domains. */
  readonly domain: string;
  readonly connectionId: string;
  readonly token: string;
  call(method: string, path: string, opts?: { body?: unknown; raw?: string; query?: Record<string, string>; ifMatch?: string; token?: string; organizationId?: string }): Promise<ScimAnswer>;
}

const parsed = (r: ScimResult): ScimAnswer => ({ status: r.status, body: r.body === undefined ? undefined : JSON.parse(JSON.stringify(r.body)), etag: r.etag, location: r.location });

/**
 * The organization claims the domain and verifies it through the domain use cases, the fixture's
 * stub resolver answering the challenge (`verify: false` leaves it pending).
 */
export async function claimDomain(fx: DirectoryFixture, organizationId: string, domain: string, opts: { verify?: boolean } = {}): Promise<OrganizationDomain> {
  const claimed = await fx.uc.domains.claim(fx.admin, organizationId, domain);
  if (opts.verify === false) return claimed;
  fx.resolver.records.set(challengeName(claimed.domain), [claimed.challenge]);
  const d = await fx.uc.domains.verify(fx.admin, organizationId, claimed.id);
  if (d.status !== 'verified') throw new Error(`the domain ${domain} was not verified (${d.status})`);
  return d;
}

/**
 * A new organization (made by the fixture's Administrator) with verified domains (by default one
 * of its own, `scim-<random>.example`; a domain is verified by one organization only) and a SCIM
 * connection of it.
 */
export async function scimClient(fx: DirectoryFixture, opts: { domains?: readonly string[] } = {}): Promise<ScimClient> {
  const org = await fx.uc.organizations.create(fx.admin, { name: 'Scim Co', slug: `scim-${unique()}` });
  const domains = opts.domains ?? [`scim-${unique()}.example`];
  for (const domain of domains) await claimDomain(fx, org.id, domain);
  const made = await fx.uc.scimConnections.create(fx.admin, org.id, { name: 'Entra ID' });
  return {
    organizationId: org.id,
    domain: domains[0]!,
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

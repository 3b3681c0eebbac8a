/**
 * The API's protected-resource metadata (RFC 9728), for clients that discover their authorization
 * server from the resource (MCP clients do): the API is one resource, `{PUBLIC_URL}/api` (the
 * provider's RFC 8707 resource indicator), whose authorization server is the provider at
 * PUBLIC_URL. Served where RFC 9728 §3.1 puts it for that identifier (the well-known path inserted
 * before the resource's path: `/.well-known/oauth-protected-resource/api`) and at the host's root
 * for clients that look there. Every 401 of the API names it (`WWW-Authenticate: Bearer
 * resource_metadata="…"`, §5.1: plugins/app/errors.ts).
 *
 * `scopes_supported` are the permission scopes: a third-party client asks for an API permission
 * as a scope of its name (services/identity/README.md "API permissions of third-party clients").
 * They are read from the directory at most once a minute; while it cannot answer, the last list
 * known is served (none: the member is left out, it is optional).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DPOP_ALGS } from '../auth/dpop';

export const PROTECTED_RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

const PERMISSIONS_TTL_MS = 60_000;
const PERMISSION_PAGES = 10;

/** The API as a resource indicator: `{PUBLIC_URL}/api`. */
export function apiResourceOf(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/api`;
}

/** RFC 9728 §3.1: the metadata URL of the API's resource identifier (the well-known path before the resource's path). */
export function resourceMetadataUrl(publicUrl: string): string {
  const resource = new URL(apiResourceOf(publicUrl));
  return `${resource.origin}${PROTECTED_RESOURCE_METADATA}${resource.pathname}`;
}

const ResourceMetadata = Type.Object(
  {
    resource: Type.String(),
    authorization_servers: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Optional(Type.Array(Type.String())),
    dpop_signing_alg_values_supported: Type.Array(Type.String()),
    dpop_bound_access_tokens_required: Type.Boolean(),
    resource_name: Type.String(),
    resource_documentation: Type.String(),
  },
  { additionalProperties: false },
);

export interface ResourceMetadataOptions {
  /** PUBLIC_URL: the provider's issuer, under which the API lives. */
  readonly publicUrl: string;
  /** One page of permission names (directory order), for `scopes_supported`. */
  readonly permissionPage: (page: number, pageSize: number) => Promise<string[]>;
}

export async function resourceMetadataRoutes(app: FastifyInstance, opts: ResourceMetadataOptions): Promise<void> {
  const publicUrl = opts.publicUrl.replace(/\/+$/, '');
  let known: { names: string[]; at: number } | undefined;
  const permissionScopes = async (): Promise<string[] | undefined> => {
    if (known && Date.now() - known.at < PERMISSIONS_TTL_MS) return known.names;
    try {
      const names: string[] = [];
      for (let page = 1; page <= PERMISSION_PAGES; page++) {
        const items = await opts.permissionPage(page, 100);
        names.push(...items);
        if (items.length < 100) break;
      }
      known = { names: [...new Set(names)].sort(), at: Date.now() };
    } catch (err) {
      app.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'permission scopes for the resource metadata not read; serving the last known');
    }
    return known?.names;
  };
  const handler = async (_req: unknown, reply: { header(k: string, v: string): unknown }) => {
    const scopes = await permissionScopes();
    reply.header('cache-control', 'public, max-age=300');
    return {
      resource: apiResourceOf(publicUrl),
      authorization_servers: [publicUrl],
      bearer_methods_supported: ['header'],
      ...(scopes ? { scopes_supported: scopes } : {}),
      dpop_signing_alg_values_supported: [...DPOP_ALGS],
      dpop_bound_access_tokens_required: false,
      resource_name: 'IAM API',
      resource_documentation: `${publicUrl}/docs`,
    };
  };
  const suffixed = new URL(resourceMetadataUrl(publicUrl)).pathname;
  for (const path of new Set([suffixed, PROTECTED_RESOURCE_METADATA])) {
    app.get(path, { schema: { hide: true, response: { 200: ResourceMetadata } } }, handler);
  }
}

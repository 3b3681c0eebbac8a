/**
 * SCIM 2.0 (issue #42) at /scim/v2/{organizationId}/…: Users, Groups, Bulk, the discovery
 * endpoints and `.search`, passed through to the directory (ScimService.Handle), which
 * authenticates the organization's SCIM connection token and speaks the protocol. SCIM clients
 * (Okta, Entra ID) never hold the API's tokens, so these routes sit outside `authenticated`:
 * a request without a bearer token is answered 401 here, before any upstream call. Bodies are
 * `application/scim+json` or `application/json`, passed as text (at most the advertised
 * maxPayloadSize); every answer, refusals included, is `application/scim+json` with the SCIM
 * error schema (`status`, `scimType`, `detail`). Not in the OpenAPI documents: SCIM's own
 * discovery endpoints describe it.
 */
import { AppError } from '@iam/platform/core';
import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config';
import { limitOf } from '../plugins/external/rate-limit';
import type { Upstreams } from '../upstreams';

export const SCIM_PREFIX = '/scim/v2';
/** The directory's advertised Bulk maxPayloadSize: every SCIM body is bounded by it. */
export const SCIM_MAX_PAYLOAD_BYTES = 1_048_576;
const SCIM_TYPE = 'application/scim+json; charset=utf-8';
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimRouteOptions {
  readonly upstreams: Pick<Upstreams, 'scim'>;
  /** PUBLIC_URL: the base of the resources' locations (else the request's own scheme and host). */
  readonly publicUrl?: string;
  /** RATE_LIMIT_SCIM_*: per bearer token (a connection), or per client address without one. */
  readonly limit: GatewayConfig['rateLimits']['scim'];
}

function scimError(reply: FastifyReply, status: number, detail: string, scimType?: string): FastifyReply {
  return reply
    .code(status)
    .type(SCIM_TYPE)
    .header('cache-control', 'no-store')
    .send(JSON.stringify({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail }));
}

/** The rate limit's key: a digest of the bearer token (never the token), else the client's address. */
const limitKey = (req: FastifyRequest): string => {
  const token = bearer(req.headers.authorization);
  return token ? createHash('sha256').update(token).digest('base64url').slice(0, 22) : `ip:${req.ip}`;
};

const bearer = (header: string | undefined): string => {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1] ?? '';
};

export async function scimRoutes(app: FastifyInstance, opts: ScimRouteOptions): Promise<void> {
  const scim = opts.upstreams.scim;
  const origin = opts.publicUrl ? new URL(opts.publicUrl).origin : undefined;
  // The body as text: the directory reads it (one parser for both media types).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: SCIM_MAX_PAYLOAD_BYTES }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) => {
    // The directory down or late (the gRPC client's errors): 503/504 with Retry-After.
    if (err instanceof AppError && err.code === 'RATE_LIMITED') return scimError(reply.header('retry-after', String(err.retryAfter ?? 1)), 429, 'Too many requests for this SCIM connection; try again later.');
    if (err instanceof AppError) {
      const status = err.code === 'UNAVAILABLE' || err.code === 'TIMEOUT' ? err.httpStatus : 500;
      if (status === 500) req.log.error({ err }, 'SCIM request failed');
      return scimError(status === 500 ? reply : reply.header('retry-after', String(err.retryAfter ?? 1)), status, status === 500 ? 'The request could not be served.' : 'The service is unavailable; try again later.');
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return scimError(reply, 413, `A request body is at most ${SCIM_MAX_PAYLOAD_BYTES} bytes (maxPayloadSize).`);
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return scimError(reply, 415, 'The body must be application/scim+json or application/json.');
    if (err.statusCode === 429 || err.statusCode === 503) return scimError(reply.header('retry-after', '1'), err.statusCode, 'Try again later.');
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return scimError(reply, err.statusCode, 'The request is not valid.', 'invalidSyntax');
    req.log.error({ err }, 'SCIM request failed');
    return scimError(reply, 500, 'The request could not be served.');
  });

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const url = new URL(req.url, 'http://scim.invalid');
    const [organizationId = '', ...rest] = url.pathname.slice(SCIM_PREFIX.length + 1).split('/');
    const token = bearer(req.headers.authorization);
    if (!token) return scimError(reply.header('www-authenticate', 'Bearer realm="scim"'), 401, 'A SCIM connection’s bearer token is required.');
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const ifMatch = req.headers['if-match'];
    const r = await scim.handle({
      organizationId: decodeURIComponent(organizationId),
      token,
      method: req.method,
      path: `/${rest.join('/')}`,
      query,
      body: typeof req.body === 'string' ? req.body : '',
      ifMatch: typeof ifMatch === 'string' ? ifMatch : '',
      baseUrl: `${origin ?? `${req.protocol}://${req.host}`}${SCIM_PREFIX}/${organizationId}`,
    });
    reply.code(r.status).header('cache-control', 'no-store');
    if (r.status === 401) reply.header('www-authenticate', 'Bearer realm="scim"');
    if (r.etag) reply.header('etag', r.etag);
    if (r.location && r.status === 201) reply.header('location', r.location);
    if (!r.body) return reply.send();
    return reply.type(SCIM_TYPE).send(r.body);
  };
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const config = { rateLimit: limitOf('scim', opts.limit, limitKey) };
  app.route({ method: [...methods], url: `${SCIM_PREFIX}/:organizationId`, schema: { hide: true }, config, handler });
  app.route({ method: [...methods], url: `${SCIM_PREFIX}/:organizationId/*`, schema: { hide: true }, config, handler });
}

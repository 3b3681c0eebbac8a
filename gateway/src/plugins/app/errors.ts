/**
 * One error handler: AppErrors, schema validation failures and Fastify's own errors become
 * application/problem+json with the trace id; anything else is logged and answered as a generic
 * 500 without message or stack. An unknown path is 404; a known path asked with a method it does
 * not serve is 405 with `Allow` (RFC 9110 §15.5.6), from the methods ./route-methods.ts learns.
 */
import { AppError, type FieldError, type Logger, internalError, newTraceId, toProblem } from '@iam/platform/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { dpopChallenge } from '../../auth/authenticator';
import { RouteMethods } from './route-methods';
import { TEXT_FORMAT } from './validation';

const FASTIFY_CODES: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => AppError.validation('The request body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => AppError.validation('The request body is empty; send a JSON object or no content type.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => AppError.validation('Content-Length does not match the body.'),
  FST_ERR_CTP_INVALID_TYPE: () => AppError.validation('The Content-Type header is not valid.'),
  FST_ERR_BAD_URL: () => AppError.validation('The URL is not valid.'),
  FST_ERR_MAX_PARAM_LENGTH: () => AppError.validation('A path parameter is too long.'),
  FST_ERR_ASYNC_CONSTRAINT: () => AppError.validation('The request is not valid.'),
};

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  /** The schema holding the failed keyword (query and path validators run verbose: validation.ts). */
  parentSchema?: { properties?: Record<string, unknown> };
}

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The parameter an unknown one stands for in this profile's spelling (`page_size` → `pageSize`
 * in the Full profile, `pageSize` → `page_size` in the Compact one), when the schema has it.
 */
export function otherSpelling(name: string, properties: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!properties) return undefined;
  return [camel(name), snake(name)].find((c) => c !== name && Object.hasOwn(properties, c));
}

/** Ajv errors → field errors named like `body.email` or `query.pageSize`. */
export function fieldErrors(context: string | undefined, errors: readonly AjvError[]): FieldError[] {
  const part = context ?? 'body';
  return errors.map((e) => {
    let path = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties' && typeof e.params?.additionalProperty === 'string') {
      const name = e.params.additionalProperty;
      path = path ? `${path}.${name}` : name;
      const hint = otherSpelling(name, e.parentSchema?.properties);
      message = hint ? `is not allowed: did you mean ${hint}?` : 'is not allowed';
    } else if (e.keyword === 'format' && e.params?.format === TEXT_FORMAT) {
      message = 'must not contain control characters (such as NUL) or unpaired surrogates';
    } else if (e.keyword === 'required' && typeof e.params?.missingProperty === 'string') {
      path = path ? `${path}.${e.params.missingProperty}` : e.params.missingProperty;
      message = 'is required';
    }
    return { field: path ? `${part}.${path}` : part, message };
  });
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    const errors = fieldErrors(fe.validationContext, fe.validation);
    // An unknown query parameter is named in the detail too (DESIGN §4).
    const unknown = fe.validationContext === 'querystring' ? (fe.validation as AjvError[]).find((e) => e.keyword === 'additionalProperties') : undefined;
    const name = unknown?.params?.additionalProperty;
    if (typeof name === 'string') {
      const hint = otherSpelling(name, unknown?.parentSchema?.properties);
      return AppError.validation(`Unknown query parameter "${name}"${hint ? `: did you mean ${hint}?` : '.'}`, errors);
    }
    return AppError.validation('The request is not valid.', errors);
  }
  const mapped = fe?.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return mapped();
  if (fe instanceof SyntaxError && (fe as { statusCode?: number }).statusCode === 400) return AppError.validation('The request body is not valid JSON.');
  const status = fe?.statusCode;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.');
  if (status && status >= 400 && status < 500) return AppError.validation('The request is not valid.');
  return internalError(err);
}

/** Field errors from a service name body or query fields plainly; here they get their part. */
function qualify(req: FastifyRequest, err: AppError): AppError {
  if (!err.errors?.some((e) => !e.field.includes('.'))) return err;
  const part = req.method === 'GET' || req.method === 'DELETE' ? 'query' : 'body';
  return err.withFieldErrors(err.errors.map((e) => (e.field.includes('.') ? e : { ...e, field: `${part}.${e.field}` })));
}

/**
 * Refusals whose problem type is more specific than their code's (DESIGN §5), by the reason the
 * service gives (AppError.reason, over gRPC as metadata): the one place reasons become types.
 */
const REASON_TYPES: Readonly<Record<string, string>> = {
  'identity.reauthentication_required': 'urn:iam:problem:reauthentication-required',
  'identity.first_party_required': 'urn:iam:problem:first-party-required',
};

/** A problem's own type and extension members (RFC 9457 §3.2), e.g. `mfaToken`. */
export interface ProblemExtension {
  readonly type: string;
  readonly members: Readonly<Record<string, unknown>>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API's protected-resource metadata URL (RFC 9728), named in every 401's challenge; undefined without one. */
    resourceMetadata: string | undefined;
  }
}

/**
 * The WWW-Authenticate challenge of a 401: RFC 9449 §7.1's DPoP challenge for a DPoP refusal (or
 * any refusal of DPoP credentials), else Bearer (RFC 6750 §3, `error="invalid_token"` when a token
 * was sent), each naming the protected-resource metadata (RFC 9728 §5.1) when there is one.
 */
export function authenticateChallenge(reason: string | undefined, authorization: string | undefined, resourceMetadata: string | undefined): string {
  const dpop = dpopChallenge(reason) ?? (/^dpop /i.test(authorization ?? '') ? dpopChallenge('dpop.invalid_token') : undefined);
  const metadata = resourceMetadata ? `resource_metadata="${resourceMetadata}"` : undefined;
  if (dpop) return metadata ? `${dpop}, ${metadata}` : dpop;
  const params = [...(authorization ? ['error="invalid_token"'] : []), ...(metadata ? [metadata] : [])];
  return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
}

export function sendProblem(req: FastifyRequest, reply: FastifyReply, error: AppError, extension?: ProblemExtension): FastifyReply {
  const err = qualify(req, error);
  const traceId = req.trace?.traceId ?? newTraceId();
  if (!reply.hasHeader('x-trace-id')) reply.header('x-trace-id', traceId);
  if (err.code === 'UNAUTHENTICATED') {
    reply.header('www-authenticate', authenticateChallenge(err.reason, req.headers.authorization, req.server.resourceMetadata));
  }
  if (err.retryAfter !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfter))));
  const instance = (req.url ?? '/').split('?')[0] ?? '/';
  return reply
    .code(err.httpStatus)
    .type('application/problem+json')
    .serializer((p: unknown) => JSON.stringify(p))
    .send(problemOf(err, { instance, traceId }, extension));
}

function problemOf(err: AppError, ctx: { instance: string; traceId: string }, extension?: ProblemExtension): object {
  const p = toProblem(err, ctx);
  const type = extension?.type ?? (err.reason ? REASON_TYPES[err.reason] : undefined);
  return { ...p, ...(type ? { type } : {}), ...extension?.members };
}

export const errorsPlugin = fp(
  async (app: FastifyInstance, opts: { logger: Logger; /** The protected-resource metadata URL every 401 names (RFC 9728 §5.1). */ resourceMetadata?: string }) => {
    const routes = new RouteMethods();
    app.addHook('onRoute', routes.onRoute);
    app.decorate('knownRoutes', () => routes.list());
    app.decorate('routePaths', () => routes.allPaths());
    app.decorate('resourceMetadata', opts.resourceMetadata);
    app.setErrorHandler((err, req, reply) => {
      const appErr = toAppError(err);
      if (appErr.code === 'INTERNAL' || appErr.httpStatus >= 500) {
        opts.logger.error({ err: appErr.cause ?? err, method: req.method, route: req.routeOptions?.url }, 'request failed');
      }
      return sendProblem(req, reply, appErr);
    });
    app.setNotFoundHandler((req, reply) => {
      const allowed = routes.allowed((req.url ?? '/').split('?')[0] ?? '/');
      // A route that found nothing (callNotFound) is a 404 too.
      if (allowed.length === 0 || allowed.includes(req.method)) return sendProblem(req, reply, AppError.notFound('No such route.'));
      reply.header('allow', allowed.join(', '));
      return sendProblem(req, reply, new AppError('METHOD_NOT_ALLOWED', `This resource answers ${allowed.join(', ')}.`));
    });
  },
  { name: 'iam-errors', dependencies: ['iam-trace'] },
);

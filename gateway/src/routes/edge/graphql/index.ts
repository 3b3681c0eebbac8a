/**
 * POST (and GET, queries only) /api/v1/graphql with mercurius, JIT-compiled after a document's
 * first run. Its own context: the bearer token is optional (products are public) and each
 * resolver decides (./resolvers.ts); a present but invalid token is 401 before anything runs.
 * Introspection (`__schema`, `__type`) per GRAPHQL_INTROSPECTION: for everyone, for callers with
 * a valid token, or for nobody; a caller who may not introspect gets no field names suggested by
 * validation messages either.
 *
 * Answers:
 *   200  a GraphQL response; a resolver's error is in `errors[]` with `extensions.code`
 *        (../errors.ts), never an internal message or stack
 *   400  a document that does not parse or validate, or breaks a limit (./limits.ts): a
 *        GraphQL response without `data`, code BAD_USER_INPUT
 *   4xx  an HTTP request that is not acceptable (malformed JSON, a body over 64 KiB, another
 *        content type, an invalid token, too many checkouts for the token's subject or the
 *        client's address): problem+json, as every route
 */
import { type Logger, AppError, internalError } from '@iam/platform/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { type DocumentNode, type ExecutionResult, GraphQLError, NoSchemaIntrospectionCustomRule, getOperationAST, parse, validate } from 'graphql';
import mercurius, { type IResolvers, type MercuriusContext } from 'mercurius';
import type { Authenticator } from '../../../auth/authenticator';
import type { GatewayConfig } from '../../../config';
import { sendProblem, toAppError } from '../../../plugins/app/errors';
import { type RateLimit, limitOf } from '../../../plugins/external/rate-limit';
import { problems } from '../../../schemas/common';
import { GraphQLBadRequest, GraphQLBody, GraphQLQueryString, GraphQLResponse } from '../../../schemas/edge';
import type { CommerceClients } from '../../../upstreams';
import { optionallyAuthenticated } from '../../audiences';
import { edgeErrorOf } from '../errors';
import { MAX_TOKENS, checkoutCount, documentChecker } from './limits';
import { createProductLoader } from './loader';
import { type EdgeContext, edgeResolvers } from './resolvers';
import { typeDefs } from './schema';
import { documentTextErrors, variablesTextError } from './text';

export const GRAPHQL_PATH = '/api/v1/graphql';

export interface GraphQLDeps {
  readonly commerce: CommerceClients;
  readonly authenticator: Authenticator;
  readonly config: GatewayConfig['graphql'];
  /** Checkouts per token subject, and the ceiling per client address. */
  readonly checkoutLimits: { readonly subject: RateLimit; readonly address: RateLimit };
  readonly logger: Logger;
}

/**
 * Why a GET's query cannot run, if it cannot: it does not parse (or is JSON rather than a
 * document), or no one operation of it is named (an unknown operationName, or several
 * operations and none named).
 */
function getQueryRefusal(params: unknown): GraphQLError | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  const query = 'query' in params ? params.query : undefined;
  const name = 'operationName' in params && typeof params.operationName === 'string' && params.operationName !== '' ? params.operationName : undefined;
  if (typeof query !== 'string') return undefined;
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: MAX_TOKENS });
  } catch (err) {
    return err instanceof GraphQLError ? err : new GraphQLError('The query is not a GraphQL document.');
  }
  if (getOperationAST(document, name)) return undefined;
  return new GraphQLError(name === undefined ? 'The query has several operations: name the one to run (operationName).' : `The query has no operation named "${name}".`);
}

/** A document refused before execution: its errors go back as a GraphQL response (400). */
class RefusedDocument extends Error {
  constructor(readonly errors: readonly GraphQLError[]) {
    super('The GraphQL document was refused.');
  }
}

interface FormattedError {
  message: string;
  locations?: ReadonlyArray<{ line: number; column: number }>;
  path?: ReadonlyArray<string | number>;
  extensions: { code: string; errors?: ReadonlyArray<{ field: string; message: string }> };
}

const INTERNAL = 'INTERNAL_SERVER_ERROR';

/** Route schemas of mercurius's routes, for validation and the edge OpenAPI document. */
function describeRoutes(route: RouteOptions): void {
  if (route.url !== GRAPHQL_PATH) return;
  const common = { tags: ['graphql'], description: 'The edge GraphQL API (the schema: introspection, or gateway/src/routes/edge/graphql/schema.ts).' };
  route.schema =
    route.method === 'POST'
      ? { ...common, summary: 'Run a GraphQL query or mutation', body: GraphQLBody, response: { 200: GraphQLResponse, 400: GraphQLBadRequest, ...problems(413, 415, 429) } }
      : { ...common, summary: 'Run a GraphQL query (mutations need POST)', querystring: GraphQLQueryString, response: { 200: GraphQLResponse, 400: GraphQLBadRequest, ...problems(405) } };
}

export function graphqlRoutes(deps: GraphQLDeps) {
  const { logger } = deps;
  const { introspection } = deps.config;
  const mayIntrospect = (req: FastifyRequest | undefined): boolean => introspection === 'public' || (introspection === 'authenticated' && !!req?.principal);
  // Whoever may not introspect gets no field names from validation messages either.
  const message = (m: string, req: FastifyRequest | undefined): string => (mayIntrospect(req) ? m : m.replace(/ Did you mean .*$/s, ''));

  const requestError = (e: Error, req: FastifyRequest | undefined): FormattedError => {
    const g = e as Partial<GraphQLError>;
    return { message: message(e.message, req), ...(g.locations ? { locations: g.locations } : {}), extensions: { code: 'BAD_USER_INPUT' } };
  };

  const executionError = (e: GraphQLError, req: FastifyRequest | undefined): FormattedError => {
    const at = { ...(e.locations ? { locations: e.locations } : {}), ...(e.path ? { path: e.path } : {}) };
    const known = edgeErrorOf(e.originalError);
    if (known) {
      if (known.code === 'UPSTREAM_UNAVAILABLE') logger.warn({ err: e.originalError, path: e.path }, 'GraphQL: commerce unavailable');
      const extensions = known.fields && known.fields.length > 0 ? { code: known.code, errors: known.fields } : { code: known.code };
      return { message: known.message, ...at, extensions };
    }
    // Without a path the request itself is at fault (its variables, its operation name).
    if (!e.path) return requestError(e, req);
    logger.error({ err: e.originalError ?? e, path: e.path, route: req?.routeOptions?.url }, 'GraphQL resolver failed');
    return { message: 'An unexpected error occurred.', ...at, extensions: { code: INTERNAL } };
  };

  const answer = (err: FastifyError & { errors?: unknown[] }, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    // Refused documents: a GraphQL response. A body that is not {query, ...}: a problem, as elsewhere.
    const errors = err instanceof RefusedDocument ? err.errors : err.code === 'MER_ERR_GQL_VALIDATION' ? err.errors : undefined;
    if (errors && errors.length > 0) {
      const first = errors[0] as FastifyError & { validation?: unknown };
      if (first.validation) return sendProblem(req, reply, toAppError(first));
      return reply
        .code(400)
        .type('application/json')
        .send({ errors: errors.map((e) => requestError(e as Error, req)) });
    }
    if (err.code === 'MER_ERR_GQL_VALIDATION') return sendProblem(req, reply, AppError.validation('The variables or extensions are not valid JSON.'));
    if (err.code === 'MER_ERR_METHOD_NOT_ALLOWED') {
      reply.header('allow', 'POST');
      return sendProblem(req, reply, new AppError('METHOD_NOT_ALLOWED', 'Mutations need POST.'));
    }
    const appErr = err instanceof AppError ? err : toAppError(err);
    if (appErr.code === 'INTERNAL' || appErr.httpStatus >= 500) logger.error({ err: appErr.cause ?? err, route: GRAPHQL_PATH }, 'GraphQL request failed');
    return sendProblem(req, reply, appErr.code === 'INTERNAL' ? internalError(err) : appErr);
  };

  // Waits for the answer to be written (a reply is thenable), so mercurius's wrapper sends nothing more.
  const errorHandler = async (err: FastifyError & { errors?: unknown[] }, req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    await answer(err, req, reply);
  };

  const errorFormatter = (execution: ExecutionResult & Required<Pick<ExecutionResult, 'errors'>>, ctx: MercuriusContext) => ({
    statusCode: 200,
    response: { data: execution.data ?? null, errors: execution.errors.map((e) => executionError(e, ctx.reply?.request)) } as unknown as ExecutionResult,
  });

  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRoute', describeRoutes);
    await app.register(
      optionallyAuthenticated(deps.authenticator, async (ctx) => {
        const { catalog } = deps.commerce;
        // mercurius picks a GET's operation (to refuse a mutation) before any GraphQL hook runs, and
        // fails on a query it cannot pick one from: such a query is refused here, as a document.
        // Fastify answers HEAD with a GET route, where mercurius refuses mutations only for GET:
        // GraphQL has no use for HEAD.
        ctx.addHook('onRequest', async (req, reply) => {
          if (req.method !== 'HEAD' || req.routeOptions.url !== GRAPHQL_PATH) return;
          reply.header('allow', 'GET, POST');
          throw new AppError('METHOD_NOT_ALLOWED', 'GraphQL answers GET (queries) and POST.');
        });
        ctx.addHook('preHandler', async (req) => {
          if (req.method !== 'GET' || req.routeOptions.url !== GRAPHQL_PATH) return;
          const refusal = getQueryRefusal(req.query);
          if (refusal) throw new RefusedDocument([refusal]);
        });
        await ctx.register(mercurius, {
          schema: typeDefs,
          resolvers: edgeResolvers(deps.commerce) as unknown as IResolvers,
          path: GRAPHQL_PATH,
          // Compiled by graphql-jit from a document's second run on (documents are cached by text).
          jit: 1,
          // GRAPHQL_IDE serves our bundled GraphiQL (../../console.ts), not mercurius's CDN page.
          graphiql: false,
          allowBatchedQueries: false,
          // Validation results are cached by document text, whoever asked: `authenticated` is decided per request below.
          validationRules: introspection === 'off' ? [NoSchemaIntrospectionCustomRule] : [],
          graphql: { parseOptions: { maxTokens: MAX_TOKENS } },
          context: (req: FastifyRequest): EdgeContext => ({
            principal: req.principal,
            products: createProductLoader(async (ids) => (await catalog.batchGetProducts({ ids })).products),
          }),
          errorFormatter,
          errorHandler,
        });

        const check = documentChecker(ctx.graphql.schema, deps.config);
        ctx.graphql.addHook('preValidation', (_schema, document) => {
          const errors = check(document);
          if (errors.length === 0) errors.push(...documentTextErrors(document));
          if (errors.length > 0) throw new RefusedDocument(errors);
        });
        ctx.graphql.addHook('preExecution', (_schema, _document, _context, variables) => {
          const error = variablesTextError(variables);
          if (error) throw new RefusedDocument([error]);
        });

        // GRAPHQL_INTROSPECTION=authenticated: an anonymous caller gets the refusal of `off`.
        if (introspection === 'authenticated') {
          const introspects = new WeakMap<DocumentNode, readonly GraphQLError[]>();
          ctx.graphql.addHook('preExecution', async (schema, document, context) => {
            if (context.reply.request.principal) return;
            let errors = introspects.get(document);
            if (!errors) introspects.set(document, (errors = validate(schema, document, [NoSchemaIntrospectionCustomRule])));
            if (errors.length > 0) throw new RefusedDocument(errors);
          });
        }

        // Checkouts (at most one per document: ./limits.ts) per token subject, then per client
        // address, on the shared limiter of plugins/external/rate-limit.ts (429). A subject over
        // its budget is refused before it spends the address's. Without a token, checkout only
        // answers UNAUTHENTICATED: the address alone counts.
        const perSubject = ctx.createRateLimit(limitOf('checkout-subject', deps.checkoutLimits.subject, (req) => req.principal?.sub ?? ''));
        const perAddress = ctx.createRateLimit(limitOf('checkout-address', deps.checkoutLimits.address));
        const within = async (limiter: typeof perSubject, req: FastifyRequest): Promise<void> => {
          const r = await limiter(req);
          if (!r.isAllowed && r.isExceeded) throw AppError.rateLimited(r.ttlInSeconds);
        };
        const checkouts = new WeakMap<DocumentNode, boolean>();
        ctx.graphql.addHook('preExecution', async (_schema, document, context) => {
          let hit = checkouts.get(document);
          if (hit === undefined) checkouts.set(document, (hit = checkoutCount(document) > 0));
          if (!hit) return;
          const req = context.reply.request;
          if (req.principal) await within(perSubject, req);
          await within(perAddress, req);
        });
      }),
    );
  };
}

/**
 * OpenAPI 3.1 documents generated from the route schemas (never written by hand): every route a
 * profile mounts is recorded with its schemas, and turned into paths, parameters, request bodies
 * and responses. Schemas are JSON Schema, which OpenAPI 3.1 uses as they are.
 */
import { ERROR_CODES } from '@iam/platform';
import type { FastifySchema, RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifySchema {
    tags?: readonly string[];
    summary?: string;
    description?: string;
    security?: ReadonlyArray<Record<string, readonly string[]>>;
    /** Left out of the documents. */
    hide?: boolean;
  }
}

type JsonSchema = Record<string, unknown>;

export interface DocumentedRoute {
  readonly method: string;
  readonly url: string;
  readonly schema: FastifySchema;
}

/** Collects the routes registered in a context (an onRoute hook). */
export class RouteCatalog {
  readonly routes: DocumentedRoute[] = [];

  readonly onRoute = (r: RouteOptions): void => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const method of methods) {
      if (method === 'HEAD' || !r.schema || r.schema.hide) continue;
      this.routes.push({ method: method.toLowerCase(), url: r.url, schema: r.schema as FastifySchema });
    }
  };
}

const STATUS_TITLES: Record<number, string> = Object.fromEntries(Object.values(ERROR_CODES).map((c) => [c.http, c.title]));
const SUCCESS: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 503: 'Service Unavailable' };

function plain(schema: unknown): JsonSchema {
  // TypeBox adds symbol-keyed metadata; JSON round-tripping keeps only JSON Schema.
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

function parameters(where: 'path' | 'query', schema: unknown): unknown[] {
  if (!schema) return [];
  const s = plain(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (s.required ?? []).includes(name),
    ...(typeof p.description === 'string' ? { description: p.description } : {}),
    schema: p,
  }));
}

function responses(r: DocumentedRoute): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [code, schema] of Object.entries((r.schema.response ?? {}) as Record<string, unknown>)) {
    const status = Number(code);
    const s = plain(schema);
    const description = SUCCESS[status] ?? STATUS_TITLES[status] ?? 'Response';
    if (status === 204 || s.type === 'null') {
      out[code] = { description };
    } else if (r.url === '/metrics') {
      out[code] = { description, content: { 'text/plain': { schema: { type: 'string' } } } };
    } else {
      out[code] = { description, content: { [status >= 400 ? 'application/problem+json' : 'application/json']: { schema: s } } };
    }
  }
  // Whatever else can happen to any request (413, 415, 429, 500, 503, 504…) is a problem document.
  out.default = { description: 'An error (RFC 9457 problem details)', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
  return out;
}

export function openApiDocument(opts: { title: string; version: string; description: string; routes: readonly DocumentedRoute[]; problem: unknown }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of opts.routes) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const s = r.schema;
    const op: Record<string, unknown> = {
      operationId: `${r.method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c?: string) => (c ? c.toUpperCase() : ''))}`,
      ...(s.tags ? { tags: s.tags } : {}),
      ...(s.summary ? { summary: s.summary } : {}),
      ...(s.description ? { description: s.description } : {}),
      ...(s.security ? { security: s.security } : {}),
    };
    const params = [...parameters('path', s.params), ...parameters('query', s.querystring)];
    if (params.length > 0) op.parameters = params;
    if (s.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(s.body) } } };
    op.responses = responses(r);
    (paths[path] ??= {})[r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: opts.title, version: opts.version, description: opts.description },
    paths,
    components: {
      schemas: { Problem: plain(opts.problem) },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}

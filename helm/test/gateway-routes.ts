/**
 * The gateway as the chart runs it, for the routing tests (routing.test.ts): its app built from
 * the env the chart renders into the gateway's Deployment (no listening, upstreams that always
 * fail), and every route path it registered (`app.routePaths()`, wildcards included); the
 * rules of the rendered Ingress and HTTPRoute, and whether a rule routes a path.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, HealthMonitor, readConfig } from '@iam/platform/core';
import { NO_SHEDDING, testLogger, testMetrics } from '@iam/platform/testing';
import { buildApp, readGatewayConfig } from '@iam/gateway';
import { Denylist } from '../../gateway/src/auth/denylist';
import type { Upstreams } from '../../gateway/src/upstreams';
import { type JsonObject, envOf, named, str } from './manifests';

/** A routing rule of the Ingress (Prefix, Exact) or the HTTPRoute (PathPrefix, Exact). */
export interface Rule {
  readonly path: string;
  readonly exact: boolean;
}

/** Whether a rule sends a request path to the gateway: Exact, or a prefix matched element by element (Kubernetes' and Gateway API's semantics). */
export function routes(rule: Rule, path: string): boolean {
  if (rule.exact) return path === rule.path;
  const prefix = rule.path.replace(/\/+$/, '');
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/** The Ingress's rules, per host: [host, rules]. */
export function ingressRules(docs: JsonObject[], name = 'r-iam-gateway'): Array<[string | undefined, Rule[]]> {
  const spec = named(docs, 'Ingress', name).spec as JsonObject;
  return (spec.rules as JsonObject[]).map((r) => [
    r.host === undefined ? undefined : str(r.host),
    ((r.http as JsonObject).paths as JsonObject[]).map((p) => ({ path: str(p.path), exact: str(p.pathType) === 'Exact' })),
  ]);
}

/** The HTTPRoute's matches (every rule's), each of its PathPrefix or Exact kind. */
export function httpRouteRules(docs: JsonObject[], name = 'r-iam-gateway'): Rule[] {
  const spec = named(docs, 'HTTPRoute', name).spec as JsonObject;
  return (spec.rules as JsonObject[]).flatMap((r) =>
    (r.matches as JsonObject[]).map((m) => {
      const p = m.path as JsonObject;
      if (!['Exact', 'PathPrefix'].includes(str(p.type))) throw new Error(`unexpected path match type ${str(p.type)}`);
      return { path: str(p.value), exact: str(p.type) === 'Exact' };
    }),
  );
}

/** The plain variables the chart gives a Deployment's container (secrets, which come from Secrets or files, left out). */
export function plainEnv(docs: JsonObject[], deployment: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of envOf(named(docs, 'Deployment', deployment))) {
    if (typeof e.value === 'string' && !str(e.name).endsWith('_FILE')) out[str(e.name)] = e.value;
  }
  return out;
}

/**
 * Every route path the gateway serves with this env (as Fastify holds them: `/api/v1/users/:id`,
 * `/oidc/*`), built as its Deployment would build it, with a console build holding every page.
 */
export async function gatewayRoutePaths(env: Record<string, string>): Promise<string[]> {
  const consoleDir = mkdtempSync(join(tmpdir(), 'iam-console-'));
  mkdirSync(join(consoleDir, 'assets'));
  for (const page of ['index.html', 'graphiql.html', 'reset-password.html', 'verify-email.html', 'account.html']) writeFileSync(join(consoleDir, page), '<!doctype html>');
  const config = readConfig({ ...env, CONSOLE_DIR: consoleDir, ...NO_SHEDDING }, readGatewayConfig);
  const upstreams = new Proxy({} as Upstreams, {
    get: () => new Proxy({}, { get: () => async () => Promise.reject(AppError.unavailable()) }),
  });
  const app = await buildApp({
    config,
    logger: testLogger(),
    metrics: testMetrics(),
    health: new HealthMonitor({ logger: testLogger(), checks: {} }),
    upstreams,
    authenticator: { verify: async () => Promise.reject(AppError.unauthenticated()) },
    denylist: new Denylist(),
  });
  try {
    await app.ready();
    return app.routePaths();
  } finally {
    await app.close();
  }
}

/**
 * The 405 route catalog: the methods each route path serves, learnt from the routes as they are
 * added (an onRoute hook of the errors plugin, ./errors.ts), so that a known path asked with a
 * method it does not serve answers 405 with `Allow` rather than 404. It also lists every route
 * (`app.knownRoutes()`), for tests that walk the API, and every path, wildcards included
 * (`app.routePaths()`), for the chart's test that the Ingress routes them all (helm/test/routing.test.ts).
 */
import type { RouteOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered so far (method, path template): the 405 answers, and tests that walk the API. */
    knownRoutes(): Array<{ method: string; url: string }>;
    /** Every route path registered so far, wildcard routes (`/oidc/*`, `/console/*`) included. */
    routePaths(): string[];
  }
}

/** The methods each route path serves, learnt as routes are added (path parameters match one segment). */
export class RouteMethods {
  private readonly paths = new Map<string, { re: RegExp; methods: Set<string> }>();
  private readonly all = new Set<string>();

  readonly onRoute = (r: RouteOptions): void => {
    this.all.add(r.url);
    if (r.url.includes('*')) return;
    let entry = this.paths.get(r.url);
    if (!entry) {
      const re = new RegExp(`^${r.url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
      entry = { re, methods: new Set() };
      this.paths.set(r.url, entry);
    }
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) entry.methods.add(m);
  };

  /** Every path, wildcard routes included (those never answer 405: they match any method they serve). */
  allPaths(): string[] {
    return [...this.all];
  }

  list(): Array<{ method: string; url: string }> {
    return [...this.paths].flatMap(([url, { methods }]) => [...methods].map((method) => ({ method, url })));
  }

  /** The methods served at this concrete path, or none when no route matches it. */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const { re, methods } of this.paths.values()) if (re.test(path)) for (const m of methods) out.add(m);
    return [...out].sort();
  }
}

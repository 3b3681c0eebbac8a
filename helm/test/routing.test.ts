/**
 * The Ingress and the HTTPRoute send the gateway every path it serves to the public, and none of
 * its ops routes (issue #44: the provider and the hosted pages were 404 at the ingress). The chart
 * is rendered; the gateway is built (no listening) with the env the chart gives its Deployment,
 * and every path it registers (wildcards included: `app.routePaths()`) is matched against the
 * rendered rules, with Kubernetes' Prefix/Exact and Gateway API's PathPrefix/Exact semantics. A
 * route the gateway gains under a new path fails here until the chart routes it (or it is made an
 * ops route).
 */
import { join } from 'node:path';
import { chartDir, chartRendering, fixturesDir } from './manifests';
import { type Rule, gatewayRoutePaths, httpRouteRules, ingressRules, plainEnv, routes } from './gateway-routes';

/** The gateway's ops routes: on its HTTP port too, never routed from outside (the ops port serves them to probes and Prometheus). */
const OPS_ROUTES = ['/metrics', '/health/live', '/health/ready'];

const { helm, renderer, helmRun, render } = chartRendering();
const run = renderer ? it : it.skip;
const inline = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
const operability = [...inline, '-f', join(fixturesDir, 'layers', 'operability.yaml')];
const production = [...operability, '-f', join(chartDir, 'values-production.yaml')];

describe('routing rules', () => {
  it('prefix rules match whole path segments, exact rules the path alone', () => {
    const api: Rule = { path: '/api', exact: false };
    expect([routes(api, '/api'), routes(api, '/api/v1/users'), routes(api, '/apix')]).toEqual([true, true, false]);
    const health: Rule = { path: '/health', exact: true };
    expect([routes(health, '/health'), routes(health, '/health/ready'), routes(health, '/healthz')]).toEqual([true, false, false]);
  });
});

describe('the Ingress and the HTTPRoute route every public path of the gateway, never an ops route', () => {
  run.each<[string, string[], { docs: boolean }]>([
    ['Ingress and HTTPRoute, /docs exposed, an extra path', operability, { docs: true }],
    ['values-production.yaml (/docs not exposed)', production, { docs: false }],
    ['GraphiQL on (GRAPHQL_IDE)', [...operability, '--set', 'gateway.env.GRAPHQL_IDE=true'], { docs: true }],
    ['the edge profile alone', [...operability, '--set-string', 'gateway.env.GATEWAY_PROFILES=edge'], { docs: true }],
  ])('%s', async (_name, args, expected) => {
    const docs = render(...args);
    const paths = await gatewayRoutePaths(plainEnv(docs, 'r-iam-gateway'));
    // The table is the real one: the provider, the hosted pages, the console and the ops routes are in it.
    expect(paths).toEqual(expect.arrayContaining(['/health/ready', '/metrics', '/api/v1/health']));
    const ruleSets: Array<[string, Rule[]]> = [...ingressRules(docs).map(([host, rules]): [string, Rule[]] => [`Ingress ${host ?? '*'}`, rules]), ['HTTPRoute', httpRouteRules(docs)]];
    expect(ruleSets).toHaveLength(2);
    for (const [where, rules] of ruleSets) {
      const wrong: string[] = [];
      for (const path of paths) {
        const routed = rules.some((r) => routes(r, path));
        const ops = OPS_ROUTES.includes(path);
        const hiddenDocs = !expected.docs && (path === '/docs' || path.startsWith('/docs/'));
        if (routed === (ops || hiddenDocs)) wrong.push(`${path} ${routed ? 'is routed but must not be' : 'is not routed'}`);
      }
      expect({ where, wrong }).toEqual({ where, wrong: [] });
    }
  });

  run('every rule but ingress.extraPaths sends a path the full gateway serves (nothing routed in vain), and the HTTPRoute has the Ingress\'s rules', async () => {
    const docs = render(...operability, '--set', 'gateway.env.GRAPHQL_IDE=true');
    const paths = await gatewayRoutePaths(plainEnv(docs, 'r-iam-gateway'));
    const [[, rules]] = ingressRules(docs) as [[string | undefined, Rule[]]];
    expect(httpRouteRules(docs)).toEqual(rules);
    const idle = rules.filter((r) => r.path !== '/oauth2' && !paths.some((p) => routes(r, p)));
    expect(idle).toEqual([]);
    // The provider, its discovery, SCIM, the hosted pages and the console are among them.
    for (const path of ['/oidc/auth', '/oidc/token', '/scim/v2/7c2b5d1e-0000-4000-8000-000000000001/Users', '/.well-known/openid-configuration', '/.well-known/jwks.json', '/reset-password', '/verify-email', '/account', '/console/users', '/healthz', '/graphiql']) {
      expect([path, rules.some((r) => routes(r, path))]).toEqual([path, true]);
    }
    expect(rules.find((r) => r.path === '/oauth2')).toEqual({ path: '/oauth2', exact: false });
  });
});

describe('the install notes', () => {
  // helm template does not render NOTES.txt; the Go renderer does (--show-only templates/NOTES.txt).
  const notesRun = renderer && !helm ? it : it.skip;
  notesRun('give the public address and list the routed paths as the Ingress has them, and whom TRUST_PROXY believes', () => {
    const r = helmRun('template', 'r', 'iam', '--namespace', 'iam', ...operability, '--set', 'gateway.env.TRUST_PROXY=null', '--show-only', 'templates/NOTES.txt');
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('export IAM_URL=https://iam.example.com\n');
    expect(r.stdout).toContain('prefixes: /api /.well-known /oidc /scim /console /docs /oauth2\n    exactly:  /account /reset-password /verify-email /health /healthz\n');
    expect(r.stdout).toContain('never /metrics, /health/live or /health/ready');
    expect(r.stdout).toContain('Sign in to the console at $IAM_URL/console');
    expect(r.stdout).toContain('X-Forwarded-* is believed from: 10.0.0.0/8 (TRUST_PROXY)');
    expect(r.stdout).not.toContain('TRUST_PROXY=true');
  });
});

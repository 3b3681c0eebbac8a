/**
 * /docs: a browsable UI (Swagger UI, served from the swagger-ui-dist package, no CDN) over the
 * OpenAPI document of each mounted profile at /docs/<profile>/openapi.json.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

/** The files served under /docs/assets, with their types. A Map: no inherited keys (`constructor`, `__proto__`). */
const ASSETS = new Map<string, string>([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'application/javascript; charset=utf-8'],
]);

export async function docsRoutes(app: FastifyInstance, opts: { documents: Record<string, () => unknown> }): Promise<void> {
  const dist = dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets = new Map<string, Buffer>();
  const asset = (name: string): Buffer => {
    let b = assets.get(name);
    if (!b) {
      b = readFileSync(join(dist, name));
      assets.set(name, b);
    }
    return b;
  };
  const profiles = Object.keys(opts.documents);

  for (const profile of profiles) {
    let cached: unknown;
    app.get(`/docs/${profile}/openapi.json`, { schema: { hide: true } }, async () => (cached ??= opts.documents[profile]!()));
  }

  app.get('/docs/assets/:file', { schema: { hide: true } }, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const type = ASSETS.get(file);
    if (type === undefined) return reply.callNotFound();
    return reply.type(type).header('cache-control', 'public, max-age=86400').send(asset(file));
  });

  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>IAM API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script>
  window.ui = SwaggerUIBundle({
    urls: ${JSON.stringify(profiles.map((p) => ({ name: `${p} profile`, url: `/docs/${p}/openapi.json` })))},
    dom_id: '#ui', deepLinking: true, layout: 'StandaloneLayout',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  });
</script></body></html>`;
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
      .send(page),
  );
}

/**
 * /docs: Swagger UI (@fastify/swagger-ui, its assets from the npm package, no CDN) over the
 * document of each mounted profile at /docs/<profile>/openapi.json.
 */
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export async function docsRoutes(app: FastifyInstance, opts: { documents: Record<string, () => unknown> }): Promise<void> {
  const profiles = Object.keys(opts.documents);
  for (const profile of profiles) {
    let cached: unknown;
    app.get(`/docs/${profile}/openapi.json`, { schema: { hide: true } }, async () => (cached ??= opts.documents[profile]!()));
  }
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { urls: profiles.map((p) => ({ name: `${p} profile`, url: `/docs/${p}/openapi.json` })), deepLinking: true, layout: 'StandaloneLayout' },
  });
}

/**
 * Strict-Transport-Security (RFC 6797) on the answers to requests that came over https: the
 * socket's own TLS, or `X-Forwarded-Proto: https` from a proxy TRUST_PROXY names. Never over http:
 * a browser ignores it there (§8.1) and a server must not send it (§7.2), and behind a proxy the
 * gateway does not trust, an http answer cannot tell whether the client used https at all.
 * helmet's own header is off (plugins/external): it is sent whatever the scheme.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { GatewayConfig } from '../../config';

/** The header's value; undefined when HSTS_MAX_AGE is 0 (off). */
export function hstsValue(hsts: GatewayConfig['hsts']): string | undefined {
  if (hsts.maxAgeSeconds === 0) return undefined;
  return `max-age=${hsts.maxAgeSeconds}${hsts.includeSubDomains ? '; includeSubDomains' : ''}${hsts.preload ? '; preload' : ''}`;
}

export const hstsPlugin = fp(
  async (app: FastifyInstance, opts: { hsts: GatewayConfig['hsts'] }) => {
    const value = hstsValue(opts.hsts);
    if (!value) return;
    app.addHook('onSend', async (req, reply, payload) => {
      if (req.protocol === 'https') reply.header('strict-transport-security', value);
      return payload;
    });
  },
  { name: 'iam-hsts' },
);

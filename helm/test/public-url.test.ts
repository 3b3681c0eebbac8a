/**
 * publicUrl is THE public address (issue #44): required with an Ingress or HTTPRoute and in
 * production, an https origin there, named by the routes' hosts; the issuer (PUBLIC_URL,
 * JWT_ISSUER) and the mail links (EMAIL_ACTION_BASE_URL) derive from it. The proxies the gateway
 * trusts are named (trustedProxies), and several gateway pods need Redis. Rendered with helm or
 * the Go-template renderer (render/).
 */
import { join } from 'node:path';
import { type JsonObject, chartRendering, envOf, fixturesDir, named } from './manifests';
import { plainEnv } from './gateway-routes';

const { renderer, helmRun, render } = chartRendering();
const run = renderer ? it : it.skip;
const inline = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
/** A small install: one gateway pod, no Ingress, no publicUrl. */
const internal = [...inline, '--set', 'ingress.enabled=false', '--set', 'publicUrl=', '--set', 'gateway.autoscaling.enabled=false', '--set', 'gateway.replicaCount=1'];

const envs = (docs: JsonObject[]) => ({
  gateway: plainEnv(docs, 'r-iam-gateway'),
  identity: plainEnv(docs, 'r-iam-identity'),
  notification: plainEnv(docs, 'r-iam-notification'),
});

describe('what derives from publicUrl', () => {
  run('the issuer of the provider and of every token, the one the gateway accepts, and the mail links: publicUrl, without a trailing slash', () => {
    const { gateway, identity, notification } = envs(render(...inline, '--set', 'publicUrl=https://iam.example.com/', '--set', 'email.actionBaseUrl='));
    const url = 'https://iam.example.com';
    expect([gateway.PUBLIC_URL, gateway.JWT_ISSUER, identity.PUBLIC_URL, identity.JWT_ISSUER, notification.EMAIL_ACTION_BASE_URL]).toEqual([url, url, url, url, url]);
    // Only identity and the gateway get the issuer.
    expect([notification.PUBLIC_URL, notification.JWT_ISSUER]).toEqual([undefined, undefined]);
  });

  run('email.actionBaseUrl overrides the mail links only; without publicUrl (no route, not production) the application\'s defaults stay', () => {
    const over = envs(render(...inline, '--set', 'email.actionBaseUrl=https://mail-links.example.com'));
    expect([over.notification.EMAIL_ACTION_BASE_URL, over.identity.PUBLIC_URL]).toEqual(['https://mail-links.example.com', 'https://iam.example.com']);
    const none = envs(render(...internal, '--set', 'email.actionBaseUrl='));
    expect([none.gateway.PUBLIC_URL, none.gateway.JWT_ISSUER, none.identity.PUBLIC_URL, none.notification.EMAIL_ACTION_BASE_URL]).toEqual([undefined, undefined, undefined, undefined]);
  });

  run('passkeys: the RP ID follows publicUrl\'s host unless webauthn.rpId names a parent domain; extra origins go to identity only', () => {
    expect(envs(render(...inline)).identity.WEBAUTHN_RP_ID).toBeUndefined();
    const { identity, gateway } = envs(render(...inline, '--set', 'webauthn.rpId=example.com', '--set', 'webauthn.extraOrigins={https://shop.example.com,https://example.com}'));
    expect([identity.WEBAUTHN_RP_ID, identity.WEBAUTHN_ORIGINS]).toEqual(['example.com', 'https://shop.example.com,https://example.com']);
    expect([gateway.WEBAUTHN_RP_ID, gateway.WEBAUTHN_ORIGINS]).toEqual([undefined, undefined]);
  });

  run('key rotation: the previous key-encryption key goes to identity alone as a secret; the cookie keys may be a list', () => {
    const k = () => Buffer.from(Array.from({ length: 32 }, (_, i) => i + Math.floor(Math.random() * 200))).toString('base64');
    const [a, b] = [k(), k()];
    const docs = render(...inline, '--set-string', `jwt.previousKeyEncryptionKey=${a}`, '--set-string', `oidc.cookieKey=${a}\\,${b}`);
    const identity = envOf(named(docs, 'Deployment', 'r-iam-identity'));
    expect(identity).toContainEqual({ name: 'JWT_KEY_ENCRYPTION_KEY_PREVIOUS', valueFrom: { secretKeyRef: { name: 'r-iam', key: 'jwt-key-encryption-key-previous' } } });
    expect(named(docs, 'Secret', 'r-iam').data).toMatchObject({ 'jwt-key-encryption-key-previous': Buffer.from(a).toString('base64'), 'oidc-cookie-key': Buffer.from(`${a},${b}`).toString('base64') });
    expect(envOf(named(docs, 'Deployment', 'r-iam-gateway')).map((e) => e.name)).not.toContain('JWT_KEY_ENCRYPTION_KEY_PREVIOUS');
    const bad = helmRun('template', 'r', 'iam', ...inline, '--set-string', `oidc.cookieKey=${a}\\,short`);
    expect(bad.stderr).toContain('iam: oidc.cookieKey must be a comma list of base64 keys of exactly 32 bytes each');
  });

  run('trustedProxies becomes TRUST_PROXY (a comma list); an HTTPRoute alone needs it as an Ingress does', () => {
    const docs = render(...inline, '--set', 'ingress.enabled=false', '--set', 'gateway.env.TRUST_PROXY=null', '--set', 'trustedProxies={10.0.0.0/8,fd00::/8}',
      '--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public');
    expect(plainEnv(docs, 'r-iam-gateway').TRUST_PROXY).toBe('10.0.0.0/8,fd00::/8');
  });

  run('one gateway pod, or Redis, or the explicit opt-out: no Redis problem', () => {
    for (const args of [internal, [...internal, '--set', 'gateway.replicaCount=3', '--set', 'redis.url=redis://redis:6379/0'], [...internal, '--set', 'gateway.replicaCount=3', '--set', 'redis.url=', '--set', 'redis.acceptPerPodLimits=true']]) {
      const r = helmRun('template', 'r', 'iam', ...args);
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    }
  });
});

describe('validateValues: the public address, the proxies, the shared state', () => {
  run.each<[string, string[], string]>([
    ['an Ingress without publicUrl', [...inline, '--set', 'publicUrl='], 'iam: publicUrl is required with an Ingress or HTTPRoute: the address browsers and apps reach the gateway at'],
    ['an HTTPRoute without publicUrl', [...internal, '--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public'], 'iam: publicUrl is required with an Ingress or HTTPRoute'],
    ['production without publicUrl', [...internal, '--set', 'production=true'], 'iam: publicUrl is required in production'],
    ['an http publicUrl with an Ingress with TLS', [...inline, '--set', 'publicUrl=http://iam.example.com'], 'iam: publicUrl must be an https:// URL in production (production: true, or an Ingress with TLS)'],
    ['an http publicUrl in production', [...internal, '--set', 'production=true', '--set', 'publicUrl=http://iam.example.com'], 'publicUrl must be an https:// URL in production'],
    ['a publicUrl with a path', [...inline, '--set', 'publicUrl=https://example.com/iam'], 'iam: publicUrl must be an origin, scheme://host[:port] with no path'],
    ['a publicUrl the Ingress does not route', [...inline, '--set', 'publicUrl=https://login.example.com'], 'iam: publicUrl\'s host login.example.com is not among ingress.hosts (iam.example.com)'],
    ['a publicUrl the HTTPRoute does not route', [...internal, '--set', 'publicUrl=https://login.example.com', '--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public',
      '--set', 'httpRoute.hostnames[0]=iam.example.com'], 'is not among httpRoute.hostnames (iam.example.com)'],
    ['a jwt.issuer other than publicUrl', [...inline, '--set', 'jwt.issuer=https://issuer.example.com'], 'iam: jwt.issuer (https://issuer.example.com) differs from publicUrl (https://iam.example.com)'],
    ['the old recipe: jwt.issuer without publicUrl', [...internal, '--set', 'jwt.issuer=https://iam.example.com'], 'iam: jwt.issuer is set but publicUrl is not'],
    ['an Ingress without trustedProxies', [...inline, '--set', 'gateway.env.TRUST_PROXY=null'], 'iam: trustedProxies is required with an Ingress or HTTPRoute'],
    ['a trusted proxy that is not an address', [...inline, '--set', 'trustedProxies={10.0.0.0/8,proxy.example.com}'], 'iam: trustedProxies: "proxy.example.com" is not an address or CIDR'],
    ['a passkey RP ID publicUrl is not under', [...inline, '--set', 'webauthn.rpId=other.example.org'], 'iam: webauthn.rpId (other.example.org) must be publicUrl\'s host (iam.example.com) or a domain it is under'],
    ['two gateway pods without Redis', [...internal, '--set', 'gateway.replicaCount=2', '--set', 'redis.url='], 'iam: the gateway may run 2 pods and has no Redis: set redis.url or redis.existingSecret'],
    ['an autoscaled gateway without Redis', [...inline, '--set', 'redis.url='], 'iam: the gateway may run 10 pods and has no Redis'],
  ])('rejects %s', (_what, args, message) => {
    const r = helmRun('template', 'r', 'iam', ...args);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});

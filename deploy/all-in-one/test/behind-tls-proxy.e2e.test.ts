/**
 * The system behind a reverse proxy that terminates TLS (issue #44): Debian's nginx on loopback
 * with a self-signed certificate (openssl), in front of the gateway, which trusts it by address
 * (TRUST_PROXY=127.0.0.1/32, as the chart's trustedProxies) and knows its public address
 * (PUBLIC_URL, https). Through the proxy, discovery advertises https:// endpoints under the public
 * address, the provider's cookies are Secure, and HSTS is sent; straight to the gateway over plain
 * http, no HSTS. Skipped without /usr/sbin/nginx or openssl.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestSystem, startTestSystem } from './harness';
import { freePort } from '@iam/platform/testing';

jest.setTimeout(120_000);

const NGINX = '/usr/sbin/nginx';
const OPENSSL = '/usr/bin/openssl';
const run = existsSync(NGINX) && existsSync(OPENSSL) ? describe : describe.skip;

/** A port free now on loopback. */

async function waitForPort(port: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const c = connect({ host: '127.0.0.1', port }, () => (c.destroy(), resolve(true)));
      c.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An https GET through the proxy, trusting its self-signed certificate only. */
function get(url: string, ca: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

run('behind a TLS-terminating reverse proxy (nginx on loopback)', () => {
  let sys: TestSystem | undefined;
  let nginx: ChildProcess | undefined;
  let dir: string;
  let ca: Buffer;
  let publicUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'iam-nginx-'));
    const made = spawnSync(OPENSSL, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);
    ca = readFileSync(join(dir, 'cert.pem'));
    const port = await freePort();
    publicUrl = `https://localhost:${port}`;
    sys = await startTestSystem({ env: { PUBLIC_URL: publicUrl, TRUST_PROXY: '127.0.0.1/32' } });
    for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) mkdirSync(join(dir, t));
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
    location / {
      proxy_pass http://127.0.0.1:${sys.gateways[0]!.port};
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
    }
  }
}
`,
    );
    nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'logs', 'error.log')], { stdio: 'ignore' });
    await waitForPort(port);
  });

  afterAll(async () => {
    if (nginx?.pid) process.kill(nginx.pid, 'SIGTERM');
    await sys?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('discovery advertises https:// endpoints under the public address, with HSTS', async () => {
    const r = await get(`${publicUrl}/.well-known/openid-configuration`, ca);
    expect(r.status).toBe(200);
    const doc = JSON.parse(r.body) as Record<string, unknown>;
    expect(doc.issuer).toBe(publicUrl);
    const endpoints = Object.entries(doc).filter(([k, v]) => k.endsWith('_endpoint') && typeof v === 'string');
    expect(endpoints.length).toBeGreaterThanOrEqual(5);
    for (const [name, url] of endpoints) expect([name, String(url).startsWith(`${publicUrl}/`)]).toEqual([name, true]);
    expect(doc.jwks_uri).toBe(`${publicUrl}/.well-known/jwks.json`);
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    // Straight to the gateway over plain http: no HSTS (RFC 6797 §7.2).
    const plain = await fetch(`${sys!.url()}/.well-known/jwks.json`);
    expect(plain.headers.get('strict-transport-security')).toBeNull();
  });

  it('the provider\'s cookies are Secure when it is reached over https', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({ client_id: 'iam-console', response_type: 'code', scope: 'openid', redirect_uri: `${publicUrl}/console/`, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const r = await get(`${publicUrl}/oidc/auth?${q.toString()}`, ca);
    expect(r.status).toBe(303);
    expect(String(r.headers.location)).toMatch(new RegExp(`^(${publicUrl})?/oidc/interaction/`));
    const cookies = (r.headers['set-cookie'] ?? []) as string[];
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) expect([c.split('=')[0], /;\s*secure(;|$)/i.test(c)]).toEqual([c.split('=')[0], true]);
  });
});

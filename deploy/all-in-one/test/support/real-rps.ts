/**
 * Relying parties people run, from Debian's packages, started by the tests against the system:
 * Apache with mod_auth_openidc (its own ServerRoot and config in a temp dir, a free port on the
 * loopback) and Python's Authlib (/usr/bin/python3: the python3 on PATH may be another one). A
 * test that needs one that is missing says so and skips, as the browser tests do without Chromium.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const APACHE = '/usr/sbin/apache2';
export const APACHE_MODULES = '/usr/lib/apache2/modules';
export const MOD_AUTH_OPENIDC = `${APACHE_MODULES}/mod_auth_openidc.so`;
export const hasApache = existsSync(APACHE) && existsSync(MOD_AUTH_OPENIDC);
export const SYSTEM_PYTHON = '/usr/bin/python3';

/** Whether Debian's python3-authlib (and python3-requests) import in /usr/bin/python3. */
export const hasAuthlib = existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, ['-c', 'import authlib, requests'], { stdio: 'ignore' }).status === 0;

export interface ModAuthOpenidcOptions {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Where Apache listens (http://127.0.0.1:<port>): the app's origin. */
  readonly origin: string;
  readonly passphrase: string;
}

/**
 * The mod_auth_openidc part of the config (the block the root README shows): a confidential client
 * registered through /api/v1/clients with redirect URI `<origin>/app/redirect_uri` and post-logout
 * URI `<origin>/loggedout`; code + PKCE S256, client_secret_basic, claims to the app as environment
 * variables (OIDC_CLAIM_*, OIDC_access_token), the access token refreshed before it expires.
 */
export function modAuthOpenidcBlock(o: ModAuthOpenidcOptions): string {
  return `OIDCProviderMetadataURL ${o.issuer}/.well-known/openid-configuration
OIDCClientID ${o.clientId}
OIDCClientSecret ${o.clientSecret}
OIDCRedirectURI ${o.origin}/app/redirect_uri
OIDCCryptoPassphrase ${o.passphrase}
OIDCScope "openid email profile offline_access"
OIDCAuthRequestParams prompt=consent
OIDCPKCEMethod S256
OIDCProviderTokenEndpointAuth client_secret_basic
OIDCPassClaimsAs environment
OIDCRefreshAccessTokenBeforeExpiry 30
OIDCDefaultLoggedOutURL ${o.origin}/loggedout
OIDCInfoHook iat access_token access_token_expires id_token userinfo refresh_token

<Location /app>
  AuthType openid-connect
  Require valid-user
  OIDCPassRefreshToken On
</Location>
`;
}

const CGI_CLAIMS = `#!/bin/sh
printf 'Content-Type: text/plain\\r\\n\\r\\n'
env | grep '^OIDC_' | sort
`;
const CGI_LOGGED_OUT = `#!/bin/sh
printf 'Content-Type: text/html\\r\\n\\r\\n'
printf '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head><body><main><h1>Signed out of the app</h1></main></body></html>'
`;

export interface ApacheRp {
  readonly origin: string;
  /** Its redirect URI and post-logout URI (register them for the client). */
  readonly redirectUri: string;
  readonly loggedOut: string;
  /** The page behind mod_auth_openidc: the OIDC_* variables it passes to the app, one a line. */
  readonly claimsUrl: string;
  /** Apache's error log (mod_auth_openidc's messages). */
  errorLog(): string;
  close(): Promise<void>;
}

/** The app's origin for a port, before Apache starts (its URIs are registered first). */
export const apacheOrigin = (port: number) => `http://127.0.0.1:${port}`;

/** Starts Apache (-DFOREGROUND, its own ServerRoot, PidFile and logs) with mod_auth_openidc for `o`. */
export async function startApacheRp(port: number, o: Omit<ModAuthOpenidcOptions, 'origin' | 'passphrase'>): Promise<ApacheRp> {
  const origin = apacheOrigin(port);
  const dir = mkdtempSync(join(tmpdir(), 'apache-rp-'));
  // The children run as www-data when Apache starts as root: they read the CGI scripts here.
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'claims.cgi'), CGI_CLAIMS, { mode: 0o755 });
  writeFileSync(join(dir, 'loggedout.cgi'), CGI_LOGGED_OUT, { mode: 0o755 });
  const root = process.getuid?.() === 0;
  const modules = ['mpm_prefork', 'authn_core', 'authz_core', 'authz_user', 'alias', 'cgi', 'auth_openidc'];
  const conf = `ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
DefaultRuntimeDir ${dir}
Mutex file:${dir} default
ErrorLog ${dir}/error.log
LogLevel warn auth_openidc:info
${modules.map((m) => `LoadModule ${m}_module ${APACHE_MODULES}/mod_${m}.so`).join('\n')}
${root ? 'User www-data\nGroup www-data' : ''}
StartServers 1
MinSpareServers 1
MaxSpareServers 2
DocumentRoot ${dir}
ScriptAlias /app/claims ${dir}/claims.cgi
ScriptAlias /loggedout ${dir}/loggedout.cgi
OIDCCacheDir ${dir}
${modAuthOpenidcBlock({ ...o, origin, passphrase: randomBytes(24).toString('base64url') })}`;
  writeFileSync(join(dir, 'httpd.conf'), conf);
  // Its own process group: at shutdown Apache (prefork) signals its whole group, which would
  // otherwise be the test runner's.
  const child: ChildProcess = spawn(APACHE, ['-d', dir, '-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '') + output;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready when it accepts connections (bounded: it starts in well under a second).
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Apache exited at start: ${errorLog()}`);
    if (await accepts(port)) break;
    if (i > 100) throw new Error(`Apache did not listen on ${port}: ${errorLog()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    origin,
    redirectUri: `${origin}/app/redirect_uri`,
    loggedOut: `${origin}/loggedout`,
    claimsUrl: `${origin}/app/claims`,
    errorLog,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** The OIDC_* lines of the claims page, as a record. */
export function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

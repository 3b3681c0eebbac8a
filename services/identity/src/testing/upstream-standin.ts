/**
 * A local stand-in for upstream providers that speaks their documented endpoints, so the presets
 * and the refusals are tested with no network (issue #40): an OpenID Connect provider in the shape
 * of Google's (discovery, JWKS, authorize, token; `iss` in the authorization response) whose ID
 * token a test can spoil (another `aud`, `alg: none`, another `iss`, expired, another nonce), and
 * GitHub's OAuth and REST endpoints (`/login/oauth/authorize`, `/login/oauth/access_token`,
 * `/user`, `/user/emails`). Codes are single use and PKCE S256 is checked, as upstreams do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

export interface StandInUser {
  readonly sub: string;
  readonly email?: string;
  readonly emailVerified?: boolean;
  readonly name?: string;
  /** GitHub: the `/user/emails` list as GitHub answers it. */
  readonly githubEmails?: ReadonlyArray<{ email: string; primary: boolean; verified: boolean }>;
}

/** How the next ID token is spoiled. */
export interface Spoil {
  readonly aud?: string;
  readonly algNone?: boolean;
  readonly iss?: string;
  readonly expired?: boolean;
  readonly nonce?: string;
  /** The `iss` of the authorization response (RFC 9207). */
  readonly responseIss?: string;
}

export interface StandIn {
  readonly url: string;
  readonly discoveryUrl: string;
  readonly github: { authorizeUrl: string; tokenUrl: string; apiUrl: string; issuer: string };
  signInAs(u: StandInUser): void;
  spoil(s: Spoil): void;
  close(): Promise<void>;
}

const b64u = (b: Buffer) => b.toString('base64url');
const readBody = async (req: IncomingMessage): Promise<URLSearchParams> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
};

export async function startStandIn(opts: { clientId: string; clientSecret: string }): Promise<StandIn> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'standin-1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let user: StandInUser | undefined;
  let spoil: Spoil = {};
  const codes = new Map<string, { user: StandInUser; nonce: string; challenge: string; redirectUri: string; spoil: Spoil }>();
  const tokens = new Map<string, StandInUser>();

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  async function idToken(u: StandInUser, nonce: string, s: Spoil): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      sub: u.sub,
      nonce: s.nonce ?? nonce,
      ...(u.email ? { email: u.email, email_verified: u.emailVerified ?? false } : {}),
      ...(u.name ? { given_name: u.name.split(' ')[0] } : {}),
    };
    const iat = s.expired ? now - 7200 : now;
    const exp = s.expired ? now - 3600 : now + 300;
    if (s.algNone) {
      const header = b64u(Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })));
      const payload = b64u(Buffer.from(JSON.stringify({ ...claims, iss: s.iss ?? url, aud: s.aud ?? opts.clientId, iat, exp })));
      return `${header}.${payload}.`;
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
      .setIssuer(s.iss ?? url)
      .setAudience(s.aud ?? opts.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(privateKey);
  }

  function authorize(req: IncomingMessage, res: ServerResponse, q: URLSearchParams, withIss: boolean) {
    if (!user || q.get('client_id') !== opts.clientId || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return json(res, 400, { error: 'invalid_request' });
    const code = b64u(randomBytes(24));
    codes.set(code, { user, nonce: q.get('nonce') ?? '', challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri') ?? '', spoil });
    const back = new URL(q.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    if (q.get('state') !== null) back.searchParams.set('state', q.get('state')!);
    if (withIss) back.searchParams.set('iss', spoil.responseIss ?? url);
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function token(req: IncomingMessage, res: ServerResponse, oidc: boolean) {
    const body = await readBody(req);
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [body.get('client_id'), body.get('client_secret')];
    if (id !== opts.clientId || secret !== opts.clientSecret) return json(res, 401, { error: 'invalid_client' });
    const code = body.get('code') ?? '';
    const c = codes.get(code);
    codes.delete(code);
    if (!c) return json(res, 400, { error: 'invalid_grant', error_description: 'code unknown or used' });
    const verifier = body.get('code_verifier') ?? '';
    if (b64u(createHash('sha256').update(verifier).digest()) !== c.challenge || body.get('redirect_uri') !== c.redirectUri) return json(res, 400, { error: 'invalid_grant' });
    const accessToken = b64u(randomBytes(24));
    tokens.set(accessToken, c.user);
    json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, ...(oidc ? { id_token: await idToken(c.user, c.nonce, c.spoil) } : { scope: 'read:user,user:email' }) });
  }

  server.on('request', (req, res) => {
    const u = new URL(req.url ?? '/', url);
    const bearer = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    void (async () => {
      switch (`${req.method} ${u.pathname}`) {
        case 'GET /.well-known/openid-configuration':
          return json(res, 200, {
            issuer: url,
            authorization_endpoint: `${url}/authorize`,
            token_endpoint: `${url}/token`,
            jwks_uri: `${url}/jwks`,
            response_types_supported: ['code'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
            code_challenge_methods_supported: ['S256'],
            authorization_response_iss_parameter_supported: true,
          });
        case 'GET /jwks':
          return json(res, 200, { keys: [jwk] });
        case 'GET /authorize':
          return authorize(req, res, u.searchParams, true);
        case 'POST /token':
          return token(req, res, true);
        case 'GET /login/oauth/authorize':
          return authorize(req, res, u.searchParams, false);
        case 'POST /login/oauth/access_token':
          return token(req, res, false);
        case 'GET /user': {
          const who = bearer ? tokens.get(bearer) : undefined;
          if (!who) return json(res, 401, { message: 'Bad credentials' });
          return json(res, 200, { id: Number(who.sub), login: `user${who.sub}`, name: who.name ?? null, email: who.email ?? null });
        }
        case 'GET /user/emails': {
          const who = bearer ? tokens.get(bearer) : undefined;
          if (!who) return json(res, 401, { message: 'Bad credentials' });
          return json(res, 200, (who.githubEmails ?? []).map((e) => ({ ...e, visibility: e.primary ? 'private' : null })));
        }
        default:
          return json(res, 404, { error: 'not_found' });
      }
    })().catch((err: unknown) => json(res, 500, { error: String(err) }));
  });

  return {
    url,
    discoveryUrl: `${url}/.well-known/openid-configuration`,
    github: { authorizeUrl: `${url}/login/oauth/authorize`, tokenUrl: `${url}/login/oauth/access_token`, apiUrl: url, issuer: 'https://github.com' },
    signInAs: (u) => {
      user = u;
    },
    spoil: (s) => {
      spoil = s;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

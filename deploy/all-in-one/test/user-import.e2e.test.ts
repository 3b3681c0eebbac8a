/**
 * Bulk import end to end (issue #39): users imported through POST /api/v1/users/import with the
 * hashes their old systems stored sign in with no reset, through REST login and through the hosted
 * sign-in page, one of each per hash family; afterwards the stored hash is the platform's argon2id
 * and a second sign-in still works. A rerun creates nothing; bad lines are refused on their own
 * line (never a 5xx); the route is for users.manage holders, NDJSON or a JSON array only.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { identityV1 } from '@iam/contracts';
import { AppError, base32Decode, base32Encode, createGrpcClient } from '@iam/platform';
import { testMetrics, testSigner } from '@iam/platform/testing';
import { fromKeycloak } from '../../../services/directory/src/importers';
import { VECTORS } from '../../../services/directory/src/infra/hashes/vectors';
import { claimsOf, totp } from './support/factors';
import { ADMIN, type TestSystem, http, persist, signedIn, startTestSystem, uniqueEmail, userHolding } from './harness';
import { freePort, signInOverHttp } from './support/oidc-rp';

jest.setTimeout(300_000);

const REDIRECT = 'http://127.0.0.1:21998/callback';
/** One cheap vector per family (the costly ones are verified in the directory's tests). */
const FAMILIES = [...new Map(VECTORS.filter((v) => v.password !== '' && !/rounds=(5[0-9]{5}|6[0-9]{5})|\$2a\$15|ln=16\b|m=65536|\$P\$F|\$S\$E/.test(v.hash)).map((v) => [v.family, v])).values()];

type Line = { line: number; status: string; id?: string; reason?: string; hashFamily?: string; totp?: string } | { summary: { jobId: string; created: number; skipped: number; refused: number; complete: boolean } };

describe('bulk import with legacy hashes (end to end)', () => {
  let sys: TestSystem;
  let issuer: string;
  let admin: string;
  let clientId: string;
  /** The legacy system's migration hook: knows one password per email. */
  let hook: Server;
  const legacyPasswords = new Map<string, string>();
  const hookCalls: string[] = [];
  const HOOK_SECRET = randomBytes(24).toString('hex');

  beforeAll(async () => {
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { email, password } = JSON.parse(body) as { email: string; password: string };
        hookCalls.push(email);
        const valid = req.headers.authorization === `Bearer ${HOOK_SECRET}` && legacyPasswords.get(email) === password;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ valid }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const port = await freePort();
    issuer = `http://localhost:${port}`;
    const hookEnv = { PASSWORD_MIGRATION_HOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/verify`, PASSWORD_MIGRATION_HOOK_SECRET: HOOK_SECRET };
    sys = await startTestSystem({ env: { PORT: String(port), PUBLIC_URL: issuer, ...hookEnv } });
    admin = (await signedIn(issuer, ADMIN.email, ADMIN.password)).token;
    const c = await http(issuer, 'POST', '/api/v1/clients', { token: admin, body: { name: `Import ${randomUUID().slice(0, 8)}`, type: 'public', redirectUris: [REDIRECT], grantTypes: ['authorization_code'] } });
    expect(c.status).toBe(201);
    clientId = c.json.clientId as string;
  });

  afterAll(async () => {
    await sys?.stop();
    await new Promise((resolve) => hook?.close(resolve));
  });

  async function importBody(body: string, contentType = 'application/x-ndjson', token = admin): Promise<{ status: number; lines: Line[]; text: string }> {
    const res = await fetch(`${issuer}/api/v1/users/import`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
    const text = await res.text();
    const lines = res.headers.get('content-type')?.startsWith('application/x-ndjson') ? text.trim().split('\n').map((l) => JSON.parse(l) as Line) : [];
    return { status: res.status, lines, text };
  }

  const hashOf = async (email: string) => (await sys.directory.dataSource.query<Array<{ password_hash: string }>>('SELECT password_hash FROM users WHERE email = $1', [email]))[0]?.password_hash;
  // A legacy verification (bcrypt at cost 12) is slow on a loaded machine: the directory's hash
  // queue may answer "busy" (429, Retry-After) rather than let a login miss its deadline; the
  // client tries again, as a real one would.
  const restLogin = (email: string, password: string) => persist(() => http(issuer, 'POST', '/api/v1/auth/generate-jwt', { body: { email, password } }));

  /** Signed in through the hosted page (tried again while the page answers busy, as restLogin). */
  async function hostedSignIn(email: string, password: string): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const r = await hostedSignInOnce(email, password);
      if (r !== 'busy' || attempt >= 5) return r === true;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }

  async function hostedSignInOnce(email: string, password: string): Promise<boolean | 'busy'> {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string };
    const url = new URL(discovery.authorization_endpoint);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', state: randomUUID() })) url.searchParams.set(k, v);
    const back = await signInOverHttp(url, { email, password, rpOrigin: REDIRECT });
    if (back.url.searchParams.has('code')) return true;
    return back.status === 429 || back.status === 503 ? 'busy' : false;
  }

  it('every family signs in with no reset through REST and the hosted page; the hash becomes argon2id; a rerun creates nothing', async () => {
    const users = FAMILIES.flatMap((v) => ['rest', 'hosted'].map((via) => ({ via, vector: v, email: uniqueEmail(`imp-${via}`) })));
    const ndjson = `${users.map((u, i) => JSON.stringify({ firstName: 'Imported', lastName: `User ${i}`, email: u.email, passwordHash: u.vector.hash, externalId: `legacy-${u.email}` })).join('\n')}\n`;
    const first = await importBody(ndjson);
    expect(first.status).toBe(200);
    expect(first.lines.slice(0, -1)).toEqual(users.map((u, i) => ({ line: i + 1, status: 'created', id: expect.any(String), hashFamily: u.vector.family })));
    expect(first.lines.at(-1)).toEqual({ summary: { jobId: expect.any(String), created: users.length, skipped: 0, refused: 0, complete: true } });

    for (const u of users) {
      const { password, hash } = u.vector;
      if (u.via === 'rest') {
        expect((await restLogin(u.email, `${password}-wrong`)).status).toBe(401);
        expect(await hashOf(u.email)).toBe(hash);
        expect({ family: u.vector.family, status: (await restLogin(u.email, password)).status }).toEqual({ family: u.vector.family, status: 200 });
        expect(await hashOf(u.email)).toMatch(/^\$argon2id\$/);
        expect((await restLogin(u.email, password)).status).toBe(200);
      } else {
        expect({ family: u.vector.family, signedIn: await hostedSignIn(u.email, password) }).toEqual({ family: u.vector.family, signedIn: true });
        expect(await hashOf(u.email)).toMatch(/^\$argon2id\$/);
        expect(await hostedSignIn(u.email, password)).toBe(true);
      }
    }

    const again = await importBody(ndjson);
    expect(again.lines.at(-1)).toEqual({ summary: { jobId: expect.any(String), created: 0, skipped: users.length, refused: 0, complete: true } });
  });

  it('a Keycloak export with an OTP credential: the user signs in with its password and a code of the imported secret; a rerun changes nothing', async () => {
    const realm = JSON.parse(readFileSync(join(__dirname, '../../../services/directory/src/importers/fixtures/keycloak-realm.json'), 'utf8')) as unknown;
    const users = [...fromKeycloak(realm)].flatMap((c) => ('user' in c ? [c.user] : []));
    const ndjson = `${users.map((u) => JSON.stringify(u)).join('\n')}\n`;
    const first = await importBody(ndjson);
    expect(first.lines.slice(0, -1)).toEqual([
      { line: 1, status: 'created', id: expect.any(String), hashFamily: 'pbkdf2-sha256', totp: 'enrolled' },
      { line: 2, status: 'created', id: expect.any(String), hashFamily: 'argon2id' },
    ]);
    // Keycloak's key is the secret's UTF-8 bytes: the authenticator app holds their base32.
    const secret = base32Encode(Buffer.from('JBSWY3DPEHPK3PXP'));
    const challenge = await restLogin('kc.pbkdf2@acme.example', 'Keycloak-Pass-1');
    expect(challenge.json.mfaToken).toEqual(expect.any(String));
    expect((await http(issuer, 'POST', '/api/v1/auth/mfa', { body: { mfaToken: challenge.json.mfaToken, code: totp(secret, 2) } })).status).toBe(401);
    const done = await http(issuer, 'POST', '/api/v1/auth/mfa', { body: { mfaToken: challenge.json.mfaToken, code: totp(secret) } });
    expect(done.status).toBe(200);
    expect(claimsOf(done.json.token as string)).toMatchObject({ sub: first.lines[0] && 'id' in first.lines[0] ? first.lines[0].id : '', amr: ['pwd', 'otp', 'mfa'] });
    const again = await importBody(ndjson);
    expect(again.lines.slice(0, -1)).toEqual([
      { line: 1, status: 'skipped', reason: 'a user with this email exists', totp: 'unchanged' },
      { line: 2, status: 'skipped', reason: 'a user with this email exists' },
    ]);
    // Parameters the verifier cannot check are refused at import, never at sign-in.
    const sha256 = await importBody(`${JSON.stringify({ firstName: 'S', lastName: 'Ha', email: uniqueEmail('imp-totp'), totp: { secret, algorithm: 'SHA256', digits: 8, period: 30 } })}\n`);
    expect(sha256.lines[0]).toEqual({ line: 1, status: 'refused', reason: expect.stringMatching(/totp\.algorithm: must be SHA1.*totp\.digits: must be 6/) });
  });

  it('ImportTotp answers the directory alone; refuses what the verifier cannot check, an unknown user, and another active secret', async () => {
    const as = (from: string) => createGrpcClient(identityV1.IdentityServiceService, { target: `127.0.0.1:${sys.identity.grpcPort}`, assert: { signer: testSigner(from), to: 'identity' }, metrics: testMetrics() });
    const codeOf = (p: Promise<unknown>) => p.then(() => 'OK', (err: unknown) => (err instanceof AppError ? err.code : String(err)));
    const email = uniqueEmail('imp-grpc');
    const made = await importBody(`${JSON.stringify({ firstName: 'G', lastName: 'Rpc', email })}\n`);
    const userId = (made.lines[0] as { id: string }).id;
    const secret = base32Encode(randomBytes(20));
    const body = { userId, secret, algorithm: 'SHA1', digits: 6, period: 30 };
    const gateway = as('gateway');
    const directory = as('directory');
    try {
      expect(await codeOf(gateway.call.importTotp(body))).toBe('FORBIDDEN');
      expect(await codeOf(directory.call.importTotp({ ...body, digits: 8 }))).toBe('VALIDATION');
      expect(await codeOf(directory.call.importTotp({ ...body, secret: base32Encode(randomBytes(4)) }))).toBe('VALIDATION');
      expect(await codeOf(directory.call.importTotp({ ...body, userId: randomUUID() }))).toBe('NOT_FOUND');
      expect(await directory.call.importTotp(body)).toEqual({ outcome: 'enrolled' });
      expect(await directory.call.importTotp(body)).toEqual({ outcome: 'unchanged' });
      expect(await codeOf(directory.call.importTotp({ ...body, secret: base32Encode(randomBytes(20)) }))).toBe('CONFLICT');
      // Sealed, never the secret in the clear; the enrolment audited without it.
      const [row] = await sys.identity.dataSource.query<Array<{ sealed_secret: Buffer; activated_at: Date | null }>>('SELECT sealed_secret, activated_at FROM mfa_totp WHERE user_id = $1', [userId]);
      expect(row!.activated_at).not.toBeNull();
      expect(row!.sealed_secret.includes(base32Decode(secret)!)).toBe(false);
      const events = await sys.identity.dataSource.query<Array<{ payload: Buffer }>>(`SELECT payload FROM outbox_events WHERE subject = 'identity.mfa.enrolled' AND convert_from(payload, 'LATIN1') LIKE $1`, [`%${userId}%`]);
      expect(events).toHaveLength(1);
      expect(events[0]!.payload.toString('latin1')).not.toContain(secret);
    } finally {
      gateway.close();
      directory.close();
    }
  });

  it('bad input is refused on its own line, nothing half-written, never a 5xx; a JSON array works too', async () => {
    const ok = { firstName: 'Array', lastName: 'User', email: uniqueEmail('imp-array'), passwordHash: FAMILIES[0]!.hash };
    const bad = [
      JSON.stringify({ firstName: 'T', lastName: 'Truncated', email: uniqueEmail('imp-bad'), passwordHash: FAMILIES[0]!.hash.slice(0, 30) }),
      JSON.stringify({ firstName: 'C', lastName: 'Cost', email: uniqueEmail('imp-bad'), passwordHash: '$2b$31$o6hx.Wog/wvFSkT/Bp/6DOxCtLRTDj7lm9on9suF/WaCGNVHbkfL6' }),
      JSON.stringify({ firstName: 'N\u0000ul', lastName: 'Char', email: uniqueEmail('imp-bad') }),
      '{"firstName": "Broken',
      JSON.stringify({ firstName: 'x'.repeat(70_000), lastName: 'Long', email: uniqueEmail('imp-bad') }),
    ];
    const r = await importBody(`${bad.join('\n')}\n`);
    expect(r.status).toBe(200);
    expect(r.lines.slice(0, -1).map((l) => ('status' in l ? [l.line, l.status] : []))).toEqual([[1, 'refused'], [2, 'refused'], [3, 'refused'], [4, 'refused'], [5, 'refused']]);
    expect(r.lines.at(-1)).toMatchObject({ summary: { created: 0, refused: 5, complete: true } });

    const arr = await importBody(JSON.stringify([ok, { ...ok }]), 'application/json');
    expect(arr.lines.slice(0, -1)).toEqual([
      { line: 1, status: 'created', id: expect.any(String), hashFamily: FAMILIES[0]!.family },
      { line: 2, status: 'skipped', reason: 'duplicate of line 1' },
    ]);
    expect((await restLogin(ok.email, FAMILIES[0]!.password)).status).toBe(200);
    const notArray = await importBody('{"a":1}', 'application/json');
    expect(notArray.lines[0]).toMatchObject({ line: 1, status: 'refused', reason: expect.stringMatching(/JSON array/) });
  });

  it('lazy migration: the hook answers once per user, through REST login and the hosted page; a wrong password fails closed', async () => {
    const rest = { email: uniqueEmail('imp-hook-rest'), password: 'Legacy-Secret-1' };
    const hosted = { email: uniqueEmail('imp-hook-hosted'), password: 'Legacy-Secret-2' };
    for (const u of [rest, hosted]) legacyPasswords.set(u.email, u.password);
    const r = await importBody([rest, hosted].map((u) => JSON.stringify({ firstName: 'Hook', lastName: 'User', email: u.email, passwordMigration: 'hook' })).join('\n'));
    expect(r.lines.at(-1)).toMatchObject({ summary: { created: 2, complete: true } });
    hookCalls.length = 0;
    expect((await restLogin(rest.email, 'Not-The-Password-1')).status).toBe(401);
    expect(await hashOf(rest.email)).toBe('');
    expect((await restLogin(rest.email, rest.password)).status).toBe(200);
    expect(await hashOf(rest.email)).toMatch(/^\$argon2id\$/);
    expect(await hostedSignIn(hosted.email, hosted.password)).toBe(true);
    expect(await hashOf(hosted.email)).toMatch(/^\$argon2id\$/);
    expect(hookCalls).toEqual([rest.email, rest.email, hosted.email]);
    // Migrated: the hook is never asked again.
    legacyPasswords.clear();
    expect((await restLogin(rest.email, rest.password)).status).toBe(200);
    expect(await hostedSignIn(hosted.email, hosted.password)).toBe(true);
    expect(hookCalls).toHaveLength(3);
  });

  it('a 100 MB file: every line answered (too long, not JSON, created), no 5xx', async () => {
    const LONG = 1_300;
    const SHORT = 50_000;
    const valid = Array.from({ length: 3 }, () => ({ firstName: 'Big', lastName: 'File', email: uniqueEmail('imp-big'), passwordHash: FAMILIES[0]!.hash }));
    const long = `${JSON.stringify({ firstName: 'x'.repeat(72_000), lastName: 'Long', email: 'long@example.com' })}\n`;
    async function* body(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < LONG; i++) yield Buffer.from(long);
      yield Buffer.from('{"firstName": "Broken\n'.repeat(SHORT));
      yield Buffer.from(`${valid.map((v) => JSON.stringify(v)).join('\n')}\n`);
    }
    const res = await fetch(`${issuer}/api/v1/users/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-ndjson' },
      body: ReadableStream.from(body()),
      duplex: 'half',
    });
    expect(res.status).toBe(200);
    const counts = { tooLong: 0, notJson: 0, created: 0, other: 0 };
    let summary: unknown;
    for (const l of (await res.text()).trim().split('\n').map((x) => JSON.parse(x) as Line)) {
      if ('summary' in l) summary = l.summary;
      else if (l.status === 'refused' && /longer than/.test(l.reason ?? '')) counts.tooLong++;
      else if (l.status === 'refused' && l.reason === 'not valid JSON') counts.notJson++;
      else if (l.status === 'created') counts.created++;
      else counts.other++;
    }
    expect(summary).toMatchObject({ created: 3, refused: LONG + SHORT, complete: true });
    expect(counts).toEqual({ tooLong: LONG, notJson: SHORT, created: 3, other: 0 });
  });

  it('is for users.manage holders only, NDJSON or JSON only', async () => {
    // A fresh token: the tests before may have outlived the first one (JWT_EXPIRY, 5 minutes).
    admin = (await signedIn(issuer, ADMIN.email, ADMIN.password)).token;
    const reader = await userHolding(issuer, admin, ['roles.manage']);
    expect((await importBody('{}\n', 'application/x-ndjson', reader.token)).status).toBe(403);
    const anonymous = await fetch(`${issuer}/api/v1/users/import`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{}\n' });
    expect(anonymous.status).toBe(401);
    const csv = await importBody('a,b\n', 'text/csv');
    expect(csv.status).toBe(415);
    expect(JSON.parse(csv.text)).toMatchObject({ status: 415, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  });
});

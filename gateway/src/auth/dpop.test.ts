/**
 * The gateway's DPoP checks (RFC 9449 §4.3, §7): the proof verifier on real keys and proofs made
 * with jose, the replay stores (this process, Redis; a proof whose id cannot be recorded is
 * refused), and the request-level rule of verifyRequest (a bound token needs the DPoP scheme and a
 * proof of its key).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { AccessClaims } from '@iam/platform/core';
import { type CryptoKey, type JWK, SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { Redis } from 'ioredis';
import { type Authenticator, dpopChallenge, verifyRequest } from './authenticator';
import { DpopError, MemoryReplayStore, RedisReplayStore, type ReplayStore, ReplayStoreUnavailable, ReportingReplayStore, createDpopVerifier, normalizeHtu } from './dpop';

const URL_ = 'https://iam.example.com/api/v1/users';
const TOKEN = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ1In0.c2ln';
const ath = (t: string) => createHash('sha256').update(t).digest('base64url');

interface Holder {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
  alg: string;
}

async function holder(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<Holder> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256'), alg };
}

async function proof(h: Holder, over: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: CryptoKey } = {}): Promise<string> {
  const claims = { jti: randomUUID(), htm: 'GET', htu: URL_, iat: Math.floor(Date.now() / 1000), ath: ath(TOKEN), ...over.claims };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k as keyof typeof claims];
  return new SignJWT(claims).setProtectedHeader({ alg: h.alg, typ: 'dpop+jwt', jwk: h.jwk, ...over.header }).sign(over.key ?? h.privateKey);
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; detail: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DpopError) return { code: err.code, detail: err.detail };
    throw err;
  }
  throw new Error('accepted');
}

describe('DPoP proof verifier', () => {
  let h: Holder;
  beforeAll(async () => {
    h = await holder();
  });
  const verifier = () => createDpopVerifier({ replay: new MemoryReplayStore() });
  const check = (p: string | string[] | undefined, over: Partial<{ method: string; urls: string[]; accessToken: string; jkt: string }> = {}) => ({
    proof: p,
    method: 'GET',
    urls: [URL_],
    accessToken: TOKEN,
    jkt: h.jkt,
    ...over,
  });

  it('accepts a fresh proof of the bound key for this request (ES256 and EdDSA), the query ignored in htu', async () => {
    const v = verifier();
    await expect(v.verify(check(await proof(h)))).resolves.toBeUndefined();
    await expect(v.verify(check(await proof(h, { claims: { htu: `${URL_}?page=2#x` } })))).resolves.toBeUndefined();
    const ed = await holder('EdDSA');
    await expect(v.verify({ ...check(await proof(ed)), jkt: ed.jkt })).resolves.toBeUndefined();
    await expect(v.verify(check(await proof(h, { claims: { htm: 'POST' } }), { method: 'post' }))).resolves.toBeUndefined();
  });

  it('a missing proof is invalid_token; two proofs, or not a JWT, invalid_dpop_proof', async () => {
    const v = verifier();
    expect(await refusal(v.verify(check(undefined)))).toMatchObject({ code: 'invalid_token' });
    const p = await proof(h);
    expect(await refusal(v.verify(check([p, p])))).toMatchObject({ code: 'invalid_dpop_proof' });
    expect(await refusal(v.verify(check('not-a-jwt')))).toMatchObject({ code: 'invalid_dpop_proof' });
  });

  it('a proof of another key is invalid_token (jkt mismatch)', async () => {
    const other = await holder();
    expect(await refusal(verifier().verify(check(await proof(other))))).toMatchObject({ code: 'invalid_token', detail: expect.stringContaining('key') });
  });

  it('refuses a wrong typ, a symmetric or missing jwk, a private key in the header, a bad signature', async () => {
    const v = verifier();
    expect(await refusal(v.verify(check(await proof(h, { header: { typ: 'JWT' } }))))).toMatchObject({ detail: expect.stringContaining('typ') });
    const hs = await new SignJWT({ jti: 'x', htm: 'GET', htu: URL_, iat: Math.floor(Date.now() / 1000), ath: ath(TOKEN) })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: JSON.parse('{"kty":"oct","k":"c2VjcmV0"}') as JWK })
      .sign(new TextEncoder().encode('secret-secret-secret-secret-32by'));
    expect(await refusal(v.verify(check(hs)))).toMatchObject({ code: 'invalid_dpop_proof', detail: expect.stringContaining('algorithm') });
    const priv = await exportJWK(h.privateKey);
    expect(await refusal(v.verify(check(await proof(h, { header: { jwk: priv } }))))).toMatchObject({ detail: expect.stringContaining('public key') });
    const other = await holder();
    // Signed by another key than the one in its header.
    expect(await refusal(v.verify(check(await proof(h, { key: other.privateKey }))))).toMatchObject({ code: 'invalid_dpop_proof', detail: expect.stringContaining('signature') });
  });

  it('refuses another method, another URI, an old or future iat, another token (ath), no jti', async () => {
    const v = verifier();
    expect(await refusal(v.verify(check(await proof(h, { claims: { htm: 'POST' } }))))).toMatchObject({ detail: expect.stringContaining('htm') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { htu: 'https://iam.example.com/api/v1/roles' } }))))).toMatchObject({ detail: expect.stringContaining('htu') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { htu: 'https://evil.example.com/api/v1/users' } }))))).toMatchObject({ detail: expect.stringContaining('htu') });
    const t = Math.floor(Date.now() / 1000);
    expect(await refusal(v.verify(check(await proof(h, { claims: { iat: t - 120 } }))))).toMatchObject({ detail: expect.stringContaining('iat') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { iat: t + 120 } }))))).toMatchObject({ detail: expect.stringContaining('iat') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { ath: ath('another') } }))))).toMatchObject({ detail: expect.stringContaining('ath') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { ath: undefined } }))))).toMatchObject({ detail: expect.stringContaining('ath') });
    expect(await refusal(v.verify(check(await proof(h, { claims: { jti: undefined } }))))).toMatchObject({ detail: expect.stringContaining('jti') });
  });

  it('a proof is accepted once (jti replay)', async () => {
    const v = verifier();
    const p = await proof(h);
    await v.verify(check(p));
    expect(await refusal(v.verify(check(p)))).toMatchObject({ code: 'invalid_dpop_proof', detail: expect.stringContaining('already used') });
  });

  it('htu is compared by scheme, authority and path', () => {
    expect(normalizeHtu('https://a.example:8443/x/y?q=1#f')).toBe('https://a.example:8443/x/y');
    expect(normalizeHtu('HTTPS://A.EXAMPLE/x')).toBe('https://a.example/x');
    expect(normalizeHtu('not a url')).toBeNull();
  });
});

describe('DPoP replay stores', () => {
  it('memory: an id is refused within its lifetime, accepted after; bounded in size', async () => {
    let now = 1_000_000;
    const s = new MemoryReplayStore(3, () => now);
    expect(await s.claim('a', 10)).toBe(true);
    expect(await s.claim('a', 10)).toBe(false);
    now += 11_000;
    expect(await s.claim('a', 10)).toBe(true);
    for (const id of ['b', 'c', 'd', 'e']) await s.claim(id, 10);
    expect(s.size).toBeLessThanOrEqual(3);
  });

  it('fail closed: while the shared store fails, a valid proof is refused (its id cannot be recorded), each failure reported', async () => {
    const h = await holder();
    const failing: ReplayStore = { claim: () => Promise.reject(new Error('down')) };
    const errors: unknown[] = [];
    const verifier = createDpopVerifier({ replay: new ReportingReplayStore(failing, (e) => errors.push(e)) });
    const check = async () => ({ proof: await proof(h), method: 'GET', urls: [URL_], accessToken: TOKEN, jkt: h.jkt });
    await expect(verifier.verify(await check())).rejects.toBeInstanceOf(ReplayStoreUnavailable);
    await expect(verifier.verify(await check())).rejects.toBeInstanceOf(ReplayStoreUnavailable);
    expect(errors).toHaveLength(2);
    // Once the store answers again, proofs pass (and a replay is refused) as before.
    let down = true;
    const flaky: ReplayStore = { claim: (jti, ttl) => (down ? Promise.reject(new Error('down')) : memory.claim(jti, ttl)) };
    const memory = new MemoryReplayStore();
    const v = createDpopVerifier({ replay: flaky });
    const c = await check();
    await expect(v.verify(c)).rejects.toBeInstanceOf(ReplayStoreUnavailable);
    down = false;
    await expect(v.verify(c)).resolves.toBeUndefined();
    expect(await refusal(v.verify(c))).toEqual({ code: 'invalid_dpop_proof', detail: 'The DPoP proof was already used (jti).' });
  });

  it('Redis: two gateways sharing Redis accept a proof id once', async () => {
    const a = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 0 });
    const b = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await a.connect();
      await b.connect();
    } catch {
      console.warn('Redis at 127.0.0.1:6379 unreachable: the shared replay store test is skipped');
      a.disconnect();
      b.disconnect();
      return;
    }
    const prefix = `test:dpop-jti:${randomUUID()}:`;
    try {
      const id = randomUUID();
      expect(await new RedisReplayStore(a, prefix).claim(id, 5)).toBe(true);
      expect(await new RedisReplayStore(b, prefix).claim(id, 5)).toBe(false);
      const keys = await a.keys(`${prefix}*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).not.toContain(id);
      expect(await a.ttl(keys[0]!)).toBeGreaterThan(0);
    } finally {
      const keys = await a.keys(`${prefix}*`);
      if (keys.length) await a.del(...keys);
      a.disconnect();
      b.disconnect();
    }
  });
});

describe('verifyRequest (the gateway rule for bound tokens)', () => {
  let h: Holder;
  beforeAll(async () => {
    h = await holder();
  });
  const claims = (cnfJkt?: string): AccessClaims => ({
    sub: 'u',
    jti: 'j',
    iss: 'i',
    aud: ['a'],
    iat: 0,
    nbf: 0,
    exp: 0,
    email: '',
    roles: [],
    permissions: [],
    ...(cnfJkt ? { cnfJkt } : {}),
  });
  const auth = (c: AccessClaims): Authenticator => ({
    verify: async () => c,
    dpop: { verifier: createDpopVerifier({ replay: new MemoryReplayStore() }), publicUrl: 'https://iam.example.com' },
  });
  const req = (authorization: string, dpop?: string) => ({ authorization, dpop, method: 'GET', requestUrl: 'http://10.0.0.5:8080/api/v1/users', path: '/api/v1/users' });
  const reason = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'accepted';
    } catch (err) {
      return (err as { code: string; reason?: string }).reason ?? (err as { code: string }).code;
    }
  };

  it('an unbound token as Bearer passes; as DPoP it is invalid_token', async () => {
    const a = auth(claims());
    await expect(verifyRequest(a, req(`Bearer ${TOKEN}`))).resolves.toMatchObject({ token: TOKEN });
    expect(await reason(verifyRequest(a, req(`DPoP ${TOKEN}`, await proof(h))))).toBe('dpop.invalid_token');
  });

  it('a bound token: as Bearer, without a proof, or with a proof of another key → refused; with its proof (htu by PUBLIC_URL) → accepted', async () => {
    const a = auth(claims(h.jkt));
    expect(await reason(verifyRequest(a, req(`Bearer ${TOKEN}`, await proof(h))))).toBe('dpop.invalid_token');
    expect(await reason(verifyRequest(a, req(`DPoP ${TOKEN}`)))).toBe('dpop.invalid_token');
    expect(await reason(verifyRequest(a, req(`DPoP ${TOKEN}`, await proof(await holder()))))).toBe('dpop.invalid_token');
    expect(await reason(verifyRequest(a, req(`DPoP ${TOKEN}`, await proof(h, { claims: { htm: 'DELETE' } }))))).toBe('dpop.invalid_dpop_proof');
    await expect(verifyRequest(a, req(`DPoP ${TOKEN}`, await proof(h)))).resolves.toMatchObject({ claims: { cnfJkt: h.jkt } });
    // The URI it reached the gateway with is accepted too.
    await expect(verifyRequest(a, req(`DPoP ${TOKEN}`, await proof(h, { claims: { htu: 'http://10.0.0.5:8080/api/v1/users' } })))).resolves.toBeDefined();
    // An authenticator without DPoP support refuses bound tokens.
    expect(await reason(verifyRequest({ verify: async () => claims(h.jkt) }, req(`DPoP ${TOKEN}`, await proof(h))))).toBe('dpop.invalid_token');
  });

  it('a bound token whose proof cannot be recorded (the replay store is down) → 503 with Retry-After, not accepted', async () => {
    const down: Authenticator = {
      verify: async () => claims(h.jkt),
      dpop: { verifier: createDpopVerifier({ replay: { claim: () => Promise.reject(new Error('ECONNREFUSED')) } }), publicUrl: 'https://iam.example.com' },
    };
    const err = await verifyRequest(down, req(`DPoP ${TOKEN}`, await proof(h))).then(
      () => undefined,
      (e: unknown) => e as { code: string; httpStatus: number; retryAfter?: number },
    );
    expect(err).toMatchObject({ code: 'UNAVAILABLE', httpStatus: 503, retryAfter: 1 });
    // An unbound token never touches the store.
    await expect(verifyRequest({ ...down, verify: async () => claims() }, req(`Bearer ${TOKEN}`))).resolves.toMatchObject({ token: TOKEN });
  });

  it('challenges name the DPoP scheme, the error and the algorithms', () => {
    expect(dpopChallenge('dpop.invalid_dpop_proof')).toMatch(/^DPoP error="invalid_dpop_proof", algs="ES256 /);
    expect(dpopChallenge('dpop.invalid_token')).toMatch(/^DPoP error="invalid_token"/);
    expect(dpopChallenge('identity.other')).toBeUndefined();
  });
});

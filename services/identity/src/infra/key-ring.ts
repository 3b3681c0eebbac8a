/**
 * The ring of JWT signing keys, generated and stored by identity: one key that signs per
 * algorithm the provider offers (`offeredAlgorithms`: RS256 for ID tokens by default, JWT_ALG for
 * access tokens and REST logins, ES256 and EdDSA for clients that ask for them). The private half
 * is sealed with the key-encryption key (AES-256-GCM, AAD = kid). Each algorithm rotates on its
 * own with the same rules: a key signs from `activates_at` to `retires_at`; its successor is
 * created (and published in the JWKS) an hour before, so relying parties and gateways know it
 * before the first token it signs; a retired key stays in the JWKS until its last token expires.
 * Replicas coordinate key creation with an advisory lock. Tokens are made and checked over the
 * ring by token-service.ts; the OpenID provider signs with `privateJwks`.
 */
import { JWT_ALGS, type JwtAlg, type Logger } from '@iam/platform';
import { SealingKeys } from '../domain/sealing';
import { type CryptoKey, type JWK, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import { type KeyObject, createPrivateKey } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { PublicJwk } from '../domain/model';
import type { PublishedKeys } from '../domain/ports';
import type { SigningKey, SigningKeys } from './token-service';

const PREPUBLISH_MS = 60 * 60 * 1000;
const SKEW_MS = 60 * 1000;

interface LoadedKey {
  kid: string;
  alg: JwtAlg;
  publicJwk: PublicJwk;
  publicKey: CryptoKey;
  /** Undefined when it cannot be decrypted (another key-encryption key): it only verifies. */
  privateKey: KeyObject | undefined;
  /** The private JWK (the OpenID provider's key store); undefined like privateKey. */
  privateJwk: JWK | undefined;
  /** base64url of the JWS protected header `{alg, kid, typ}`, the same for every token it signs. */
  header: string;
  activatesAt: Date;
  retiresAt: Date;
  expiresAt: Date;
}

export interface KeyRingOptions {
  readonly dataSource: DataSource;
  /** JWT_ALG: the algorithm access tokens (REST and the provider's) are signed and accepted in. */
  readonly alg: JwtAlg;
  /** The algorithms the ring keeps a signing key for (default `offeredAlgorithms(alg)`). */
  readonly algs?: readonly JwtAlg[];
  readonly keyEncryptionKey: Buffer;
  /** Keys of a rotation (JWT_KEY_ENCRYPTION_KEY_PREVIOUS): they still open the keys they sealed; new keys are sealed under keyEncryptionKey. */
  readonly previousKeyEncryptionKeys?: readonly Buffer[];
  readonly rotationHours: number;
  /** The longest lifetime (s) of a token a key signs (access and ID tokens): how long a retired key must stay published. */
  readonly tokenLifetimeSeconds: number;
  readonly logger: Logger;
}

/**
 * The algorithms the ring keeps a key for: RS256 first (the ID tokens' default: OpenID Connect
 * Discovery §3 says every provider offers it and every relying party verifies it), then the
 * access tokens' JWT_ALG, then the rest a client may choose for its ID tokens and userinfo
 * (`id_token_signed_response_alg`). Every one has a key at all times, so a client switched to
 * another algorithm gets tokens of a key published before it signed (the same pre-publication as
 * rotation), never of one made on the spot.
 */
export function offeredAlgorithms(accessTokenAlg: JwtAlg): JwtAlg[] {
  return [...new Set<JwtAlg>(['RS256', accessTokenAlg, ...JWT_ALGS])];
}

export async function generateSigningKey(alg: JwtAlg): Promise<{ kid: string; publicJwk: PublicJwk; privateJwk: JWK }> {
  const { publicKey, privateKey } =
    alg === 'EdDSA'
      ? await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
      : alg === 'ES256'
        ? await generateKeyPair('ES256', { extractable: true })
        : await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub);
  const publicJwk = { ...pub, kid, alg, use: 'sig' } as PublicJwk;
  return { kid, publicJwk, privateJwk: { ...(await exportJWK(privateKey)), kid, alg } };
}

/** The node:crypto key type each algorithm signs with. */
const KEY_TYPE: Record<JwtAlg, string> = { EdDSA: 'ed25519', ES256: 'ec', RS256: 'rsa' };

export class KeyRing implements PublishedKeys, SigningKeys {
  private keys: LoadedKey[] = [];
  private lastLoad = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly algs: readonly JwtAlg[];

  private readonly sealing: SealingKeys;

  constructor(private readonly opts: KeyRingOptions) {
    this.sealing = new SealingKeys(opts.keyEncryptionKey, opts.previousKeyEncryptionKeys);
    this.algs = opts.algs ?? offeredAlgorithms(opts.alg);
    if (!this.algs.includes(opts.alg)) throw new Error(`the key ring must keep a key for JWT_ALG (${opts.alg})`);
  }

  /** The algorithm access tokens are signed in (JWT_ALG): the only one they are accepted in. */
  get alg(): JwtAlg {
    return this.opts.alg;
  }

  /** The algorithms the ring keeps a signing key for (the provider offers these for ID tokens and userinfo). */
  get algorithms(): readonly JwtAlg[] {
    return this.algs;
  }

  /** Loads the keys and makes sure one of each algorithm can sign now. */
  async start(): Promise<void> {
    await this.rotateIfDue();
    this.timer = setInterval(() => {
      this.rotateIfDue().catch((err: unknown) => this.opts.logger.error({ err }, 'signing key rotation failed'));
    }, 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Readiness: throws unless a loaded key of every algorithm can sign now. */
  async check(): Promise<void> {
    const now = new Date();
    const missing = this.algs.filter((alg) => !this.signing(alg, now));
    if (missing.length > 0) throw new Error(`no signing key loaded for ${missing.join(', ')}`);
  }

  /** Per algorithm, how long ago the key that signs now started to (the key-age metric); an algorithm with no such key is left out. */
  signingKeyAges(now = new Date()): Array<{ alg: JwtAlg; seconds: number }> {
    return this.algs.flatMap((alg) => {
      const key = this.signing(alg, now);
      return key ? [{ alg, seconds: Math.max(0, (now.getTime() - key.activatesAt.getTime()) / 1000) }] : [];
    });
  }

  /** Creates the next key of each algorithm whose active key retires within the pre-publication window (or that has none). */
  async rotateIfDue(now = new Date()): Promise<void> {
    await this.load();
    if (!this.algs.some((alg) => this.needsKey(alg, now))) return;
    await this.opts.dataSource.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['identity:signing-keys']);
      // Under the lock, with the time of now: a replica that waited here sees the keys the other just made.
      now = new Date(Math.max(now.getTime(), Date.now()));
      this.keys = await this.read(m.query.bind(m));
      for (const alg of this.algs) {
        if (this.needsKey(alg, now)) await this.createSuccessor(m.query.bind(m), alg, now);
      }
    });
    await this.load(true);
  }

  /**
   * Stores the next key of `alg`: it signs from the retirement of the key that signs now (or from
   * now when none does), for JWT_KEY_ROTATION_HOURS, and stays published until the last token it
   * signed has expired.
   */
  private async createSuccessor(query: (sql: string, params?: unknown[]) => Promise<unknown>, alg: JwtAlg, now: Date): Promise<void> {
    const current = this.signing(alg, now);
    const activatesAt = current ? current.retiresAt : now;
    const retiresAt = new Date(activatesAt.getTime() + this.opts.rotationHours * 3600_000);
    const expiresAt = new Date(retiresAt.getTime() + this.opts.tokenLifetimeSeconds * 1000 + SKEW_MS);
    const { kid, publicJwk, privateJwk } = await generateSigningKey(alg);
    await query(
      `INSERT INTO signing_keys (kid, alg, public_jwk, private_key, activates_at, retires_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [kid, alg, JSON.stringify(publicJwk), this.sealing.seal(JSON.stringify(privateJwk), kid), activatesAt, retiresAt, expiresAt],
    );
    this.opts.logger.info({ kid, alg, activatesAt, retiresAt }, 'signing key created');
  }

  private needsKey(alg: JwtAlg, now: Date): boolean {
    const usable = this.keys.filter((k) => k.privateKey && k.alg === alg);
    const latest = usable.reduce<LoadedKey | undefined>((a, k) => (!a || k.retiresAt > a.retiresAt ? k : a), undefined);
    return !latest || latest.retiresAt.getTime() - now.getTime() <= PREPUBLISH_MS || !this.signing(alg, now);
  }

  /** The key of `alg` that signs now: active, decryptable; the newest wins. */
  private signing(alg: JwtAlg, now: Date): LoadedKey | undefined {
    return this.keys
      .filter((k) => k.privateKey && k.alg === alg && k.activatesAt <= now && now < k.retiresAt)
      .sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime())[0];
  }

  private async load(force = false): Promise<void> {
    if (!force && Date.now() - this.lastLoad < 30_000 && this.keys.length > 0) return;
    this.keys = await this.read((sql, params) => this.opts.dataSource.query(sql, params));
    this.lastLoad = Date.now();
  }

  private async read(query: (sql: string, params?: unknown[]) => Promise<unknown>): Promise<LoadedKey[]> {
    const rows = (await query(
      `SELECT kid, alg, public_jwk, private_key, activates_at, retires_at, expires_at FROM signing_keys WHERE expires_at > now() ORDER BY activates_at`,
    )) as Array<{ kid: string; alg: JwtAlg; public_jwk: PublicJwk; private_key: Buffer; activates_at: Date; retires_at: Date; expires_at: Date }>;
    const out: LoadedKey[] = [];
    for (const r of rows) {
      // A row of an algorithm this build does not know is skipped (it neither signs nor verifies).
      if (!(JWT_ALGS as readonly string[]).includes(r.alg)) continue;
      let privateKey: KeyObject | undefined;
      let privateJwk: JWK | undefined;
      try {
        const jwk = JSON.parse(this.sealing.open(r.private_key, r.kid).toString('utf8')) as JWK;
        privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
        if (privateKey.asymmetricKeyType !== KEY_TYPE[r.alg]) throw new Error(`a ${privateKey.asymmetricKeyType} key stored for ${r.alg}`);
        privateJwk = { ...jwk, kid: r.kid, alg: r.alg, use: 'sig' };
      } catch {
        privateKey = undefined;
        this.opts.logger.warn({ kid: r.kid }, 'signing key cannot be decrypted with the configured key-encryption keys (current or previous); it only verifies');
      }
      out.push({
        kid: r.kid,
        alg: r.alg,
        // Rows of before every key named its use (and alg) in the JWKS get both (RFC 7517 §4.2, §4.4).
        publicJwk: { ...r.public_jwk, kid: r.kid, alg: r.alg, use: 'sig' },
        publicKey: (await importJWK(r.public_jwk as JWK, r.alg)) as CryptoKey,
        privateKey,
        privateJwk,
        header: Buffer.from(JSON.stringify({ alg: r.alg, kid: r.kid, typ: 'JWT' })).toString('base64url'),
        activatesAt: r.activates_at,
        retiresAt: r.retires_at,
        expiresAt: r.expires_at,
      });
    }
    return out;
  }

  /**
   * The key of JWT_ALG that signs now (access tokens); when none does (the first start, or
   * rotation fell behind), the ring's keys are made first. Throws when no key can sign.
   */
  async signingKey(now = new Date()): Promise<SigningKey> {
    let key = this.signing(this.opts.alg, now);
    if (!key) {
      await this.rotateIfDue(now);
      key = this.signing(this.opts.alg, now);
    }
    if (!key?.privateKey) throw new Error('no signing key');
    return { kid: key.kid, alg: key.alg, privateKey: key.privateKey, header: key.header };
  }

  /**
   * The public key of an access token's kid, reading the ring again once when it is not known
   * yet. Only keys of JWT_ALG: a key that signs ID tokens in another algorithm never makes an
   * access token.
   */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    const find = () => this.keys.find((k) => k.kid === kid && k.alg === this.opts.alg);
    let key = find();
    if (!key) {
      await this.load();
      key = find();
    }
    return key?.publicKey;
  }

  /**
   * The private JWKs of the keys that can sign, for the OpenID provider's key store: the key of
   * each algorithm that signs now first (the provider signs with the first key of an algorithm),
   * the others after them (they verify). `version` changes whenever this set or its order does.
   */
  async privateJwks(now = new Date()): Promise<{ version: string; keys: JWK[] }> {
    await this.ensureSigning(now);
    const first = new Set(this.algs.map((alg) => this.signing(alg, now)).filter((k) => k !== undefined));
    const live = this.keys.filter((k) => k.privateJwk && k.expiresAt.getTime() > now.getTime());
    const ordered = [...live.filter((k) => first.has(k)), ...live.filter((k) => !first.has(k))];
    return { version: ordered.map((k) => k.kid).join(','), keys: ordered.map((k) => k.privateJwk!) };
  }

  /** Makes the ring's keys first when an algorithm has none that signs now; throws when one still has none. */
  private async ensureSigning(now: Date): Promise<void> {
    if (this.algs.every((alg) => this.signing(alg, now))) return;
    await this.rotateIfDue(now);
    const missing = this.algs.filter((alg) => !this.signing(alg, now));
    if (missing.length > 0) throw new Error(`no signing key for ${missing.join(', ')}`);
  }

  /** Every published key (its `kid`, `alg` and `use: sig`): those that sign, their successors, and retired ones whose tokens may live. */
  async jwks(): Promise<PublicJwk[]> {
    await this.load();
    const now = Date.now();
    return this.keys.filter((k) => k.expiresAt.getTime() > now).map((k) => k.publicJwk);
  }
}

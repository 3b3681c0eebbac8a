/**
 * The ring of JWT signing keys, generated and stored by identity. The private half is sealed with
 * the key-encryption key (AES-256-GCM, AAD = kid). A key signs from `activates_at` to `retires_at`;
 * its successor is created (and published in the JWKS) an hour before, so gateways know it
 * before the first token it signs; a retired key stays in the JWKS until its last token expires.
 * Replicas coordinate key creation with an advisory lock. Tokens are made and checked over the
 * ring by token-service.ts.
 */
import type { JwtAlg, Logger } from '@iam/platform';
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
  readonly alg: JwtAlg;
  readonly keyEncryptionKey: Buffer;
  /** Keys of a rotation (JWT_KEY_ENCRYPTION_KEY_PREVIOUS): they still open the keys they sealed; new keys are sealed under keyEncryptionKey. */
  readonly previousKeyEncryptionKeys?: readonly Buffer[];
  readonly rotationHours: number;
  /** Access-token lifetime (s): how long a retired key must stay published. */
  readonly tokenLifetimeSeconds: number;
  readonly logger: Logger;
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

  private readonly sealing: SealingKeys;

  constructor(private readonly opts: KeyRingOptions) {
    this.sealing = new SealingKeys(opts.keyEncryptionKey, opts.previousKeyEncryptionKeys);
  }

  /** The algorithm of the keys that sign (JWT_ALG): the only one tokens are accepted in. */
  get alg(): JwtAlg {
    return this.opts.alg;
  }

  /** Loads the keys and makes sure one can sign now. */
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

  /** Readiness: throws unless a loaded key can sign now. */
  async check(): Promise<void> {
    if (!this.signing(new Date())) throw new Error('no signing key loaded');
  }

  /** The key that signs now and how long ago it started to (the key-age metric); undefined when none can. */
  signingKeyAge(now = new Date()): { alg: JwtAlg; seconds: number } | undefined {
    const key = this.signing(now);
    return key && { alg: key.alg, seconds: Math.max(0, (now.getTime() - key.activatesAt.getTime()) / 1000) };
  }

  /** Creates the next key when the active one retires within the pre-publication window. */
  async rotateIfDue(now = new Date()): Promise<void> {
    await this.load();
    if (!this.needsKey(now)) return;
    await this.opts.dataSource.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['identity:signing-keys']);
      // Under the lock, with the time of now: a replica that waited here sees the key the other just made.
      now = new Date(Math.max(now.getTime(), Date.now()));
      this.keys = await this.read(m.query.bind(m));
      if (!this.needsKey(now)) return;
      const current = this.signing(now);
      const activatesAt = current ? current.retiresAt : now;
      const retiresAt = new Date(activatesAt.getTime() + this.opts.rotationHours * 3600_000);
      const expiresAt = new Date(retiresAt.getTime() + this.opts.tokenLifetimeSeconds * 1000 + SKEW_MS);
      const { kid, publicJwk, privateJwk } = await generateSigningKey(this.opts.alg);
      await m.query(
        `INSERT INTO signing_keys (kid, alg, public_jwk, private_key, activates_at, retires_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [kid, this.opts.alg, JSON.stringify(publicJwk), this.sealing.seal(JSON.stringify(privateJwk), kid), activatesAt, retiresAt, expiresAt],
      );
      // Keys of another algorithm (JWT_ALG changed) stop signing when the new one starts.
      await m.query(
        `UPDATE signing_keys SET retires_at = $2, expires_at = $2::timestamptz + make_interval(secs => $3)
          WHERE alg <> $1 AND retires_at > $2`,
        [this.opts.alg, activatesAt, this.opts.tokenLifetimeSeconds + SKEW_MS / 1000],
      );
      this.opts.logger.info({ kid, alg: this.opts.alg, activatesAt, retiresAt }, 'signing key created');
    });
    await this.load(true);
  }

  private needsKey(now: Date): boolean {
    const usable = this.keys.filter((k) => k.privateKey && k.alg === this.opts.alg);
    const latest = usable.reduce<LoadedKey | undefined>((a, k) => (!a || k.retiresAt > a.retiresAt ? k : a), undefined);
    return !latest || latest.retiresAt.getTime() - now.getTime() <= PREPUBLISH_MS || !this.signing(now);
  }

  /** The key that signs now: active, of the configured algorithm, decryptable; the newest wins. */
  private signing(now: Date): LoadedKey | undefined {
    return this.keys
      .filter((k) => k.privateKey && k.alg === this.opts.alg && k.activatesAt <= now && now < k.retiresAt)
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
        publicJwk: r.public_jwk,
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
   * The key that signs now; when none does (the first start, or rotation fell behind), one is
   * made first. Throws when no key can sign.
   */
  async signingKey(now = new Date()): Promise<SigningKey> {
    let key = this.signing(now);
    if (!key) {
      await this.rotateIfDue(now);
      key = this.signing(now);
    }
    if (!key?.privateKey) throw new Error('no signing key');
    return { kid: key.kid, alg: key.alg, privateKey: key.privateKey, header: key.header };
  }

  /** The public key with this kid, reading the ring again once when it is not known yet. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    let key = this.keys.find((k) => k.kid === kid);
    if (!key) {
      await this.load();
      key = this.keys.find((k) => k.kid === kid);
    }
    return key?.publicKey;
  }

  /**
   * The private JWKs of the keys that can sign, for the OpenID provider's key store: the key that
   * signs now first (the provider signs with the first key of an algorithm), the others after it
   * (they verify). `version` changes whenever this set or its order does.
   */
  async privateJwks(now = new Date()): Promise<{ version: string; keys: JWK[] }> {
    await this.signingKey(now);
    const first = this.signing(now);
    const live = this.keys.filter((k) => k.privateJwk && k.expiresAt.getTime() > now.getTime());
    const ordered = [...live.filter((k) => k === first), ...live.filter((k) => k !== first)];
    return { version: ordered.map((k) => k.kid).join(','), keys: ordered.map((k) => k.privateJwk!) };
  }

  async jwks(): Promise<PublicJwk[]> {
    await this.load();
    const now = Date.now();
    return this.keys.filter((k) => k.expiresAt.getTime() > now).map((k) => k.publicJwk);
  }
}

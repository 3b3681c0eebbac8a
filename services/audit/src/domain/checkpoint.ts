/**
 * Signed checkpoints of the chain's head, as transparency logs sign their tree heads (RFC 9162's
 * signed tree heads, Sigstore Rekor's checkpoints): the audit service signs (seq, hash, time)
 * with an Ed25519 key that is not in its database and publishes the result outside it, so the
 * database's owner cannot cut or rewrite the chain up to a checkpoint unseen. Anyone holding the
 * public key can check a checkpoint; nothing else is needed.
 */
import { type KeyObject, createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

export interface Checkpoint {
  /** The chain's last entry when it was signed, and that entry's hash (hex SHA-256). */
  readonly seq: number;
  readonly hash: string;
  readonly signedAt: Date;
  /** Which key signed it (checkpointKeyId of its public key). */
  readonly keyId: string;
  /** base64 of the Ed25519 signature of signedText(). */
  readonly signature: string;
}

/** The JSON form of a checkpoint: an export line, the `checkpoint` of its log line. */
export interface CheckpointJson {
  readonly seq: number;
  readonly hash: string;
  readonly signedAt: string;
  readonly keyId: string;
  readonly signature: string;
}

export const CHECKPOINT_FORMAT = 'iam-audit-checkpoint/v1';

/** Exactly what is signed: the format, the key id, seq, hash and time, one per line. */
export function signedText(c: Omit<Checkpoint, 'signature'>): string {
  return `${CHECKPOINT_FORMAT}\n${c.keyId}\n${c.seq}\n${c.hash}\n${c.signedAt.toISOString()}\n`;
}

// DER prefixes of an Ed25519 private key (PKCS #8) and public key (SPKI) around the raw 32 bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** First 16 hex digits of the SHA-256 of the raw public key. */
export function checkpointKeyId(rawPublicKey: Buffer): string {
  return createHash('sha256').update(rawPublicKey).digest('hex').slice(0, 16);
}

/** A public key that checks checkpoints. */
export interface CheckpointKey {
  readonly keyId: string;
  /** base64 of the raw 32-byte Ed25519 public key (what is published). */
  readonly publicKey: string;
  /** PEM (SPKI) of the same key, for tools such as openssl. */
  readonly publicKeyPem: string;
  /** Whether `c` carries this key's id and a valid signature by it. */
  verifies(c: Checkpoint): boolean;
}

export interface CheckpointSigner extends CheckpointKey {
  sign(head: { readonly seq: number; readonly hash: string }, at: Date): Checkpoint;
}

function keyOf(object: KeyObject, raw: Buffer): CheckpointKey {
  const keyId = checkpointKeyId(raw);
  return {
    keyId,
    publicKey: raw.toString('base64'),
    publicKeyPem: object.export({ format: 'pem', type: 'spki' }).toString(),
    verifies: (c) => {
      if (c.keyId !== keyId) return false;
      const signature = Buffer.from(c.signature, 'base64');
      return signature.length === 64 && verify(null, Buffer.from(signedText(c)), object, signature);
    },
  };
}

/** The key of a published public key: base64 of its raw 32 bytes, or its PEM. Throws when it is neither. */
export function checkpointKey(published: string): CheckpointKey {
  const text = published.trim();
  const object = text.startsWith('-----BEGIN')
    ? createPublicKey(text)
    : (() => {
        const raw = Buffer.from(text, 'base64');
        if (raw.length !== 32) throw new Error('a checkpoint public key is base64 of 32 bytes (or PEM)');
        return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
      })();
  if (object.asymmetricKeyType !== 'ed25519') throw new Error('a checkpoint public key is an Ed25519 key');
  return keyOf(object, object.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length));
}

/** The signer of a 32-byte Ed25519 private key (seed), e.g. AUDIT_CHECKPOINT_SIGNING_KEY. */
export function checkpointSigner(seed: Buffer): CheckpointSigner {
  if (seed.length !== 32) throw new Error('a checkpoint signing key is 32 bytes');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicObject = createPublicKey(privateKey);
  const key = keyOf(publicObject, publicObject.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length));
  return {
    ...key,
    sign: (head, at) => {
      const unsigned = { seq: head.seq, hash: head.hash, signedAt: at, keyId: key.keyId };
      return { ...unsigned, signature: sign(null, Buffer.from(signedText(unsigned)), privateKey).toString('base64') };
    },
  };
}

export function checkpointJson(c: Checkpoint): CheckpointJson {
  return { seq: c.seq, hash: c.hash, signedAt: c.signedAt.toISOString(), keyId: c.keyId, signature: c.signature };
}

/** A checkpoint from its JSON form; throws naming what is wrong. */
export function parseCheckpoint(v: unknown): Checkpoint {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const signedAt = typeof o.signedAt === 'string' ? new Date(o.signedAt) : new Date(Number.NaN);
  if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1) throw new Error('seq must be a whole number from 1');
  if (typeof o.hash !== 'string' || !/^[0-9a-f]{64}$/.test(o.hash)) throw new Error('hash must be 64 hex digits');
  if (Number.isNaN(signedAt.getTime())) throw new Error('signedAt must be an ISO 8601 time');
  if (typeof o.keyId !== 'string' || typeof o.signature !== 'string') throw new Error('keyId and signature must be strings');
  return { seq: o.seq as number, hash: o.hash, signedAt, keyId: o.keyId, signature: o.signature };
}

/**
 * The key-encryption key and its rotation (issue #44 item 6). Identity seals the signing keys'
 * private halves with JWT_KEY_ENCRYPTION_KEY, and derives from it (HKDF, one label per use) the
 * key sealing TOTP secrets. During a rotation the keys named by JWT_KEY_ENCRYPTION_KEY_PREVIOUS
 * still open what they sealed; everything new is sealed under the current key, and `reseal`
 * (infra/reseal.ts) moves what is left, after which the previous keys can go.
 */
import { open, seal } from '@iam/platform';

/** The AAD of a user's sealed TOTP secret: it opens for that user only. */
export function totpAad(userId: string): string {
  return `totp:${userId}`;
}

export class SealingKeys {
  constructor(
    /** Seals; tried first when opening. */
    readonly current: Buffer,
    /** Open only (the rotation window). */
    readonly previous: readonly Buffer[] = [],
  ) {}

  seal(plaintext: Buffer | string, aad: string): Buffer {
    return seal(this.current, plaintext, aad);
  }

  /** The plaintext, and whether a previous key sealed it (then it should be sealed again). Throws when no key opens it. */
  openAny(sealed: Buffer, aad: string): { plaintext: Buffer; stale: boolean } {
    let failure: unknown;
    for (const [i, key] of [this.current, ...this.previous].entries()) {
      try {
        return { plaintext: open(key, sealed, aad), stale: i > 0 };
      } catch (err) {
        failure = err;
      }
    }
    throw failure instanceof Error ? failure : new Error('no key opens the sealed data');
  }

  open(sealed: Buffer, aad: string): Buffer {
    return this.openAny(sealed, aad).plaintext;
  }

  /** The same keys, each through `derive` (a key of one use derived from each key-encryption key). */
  map(derive: (key: Buffer) => Buffer): SealingKeys {
    return new SealingKeys(derive(this.current), this.previous.map(derive));
  }
}

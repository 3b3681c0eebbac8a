/**
 * The directory's one password port (PasswordHasher): new hashes are the platform's argon2id;
 * a stored hash of any family an import accepted verifies here (so identity's password check stays
 * one call with no branch per family), through a bounded queue of its own; every hash that
 * is not argon2id with the current parameters needs a rehash after a successful sign-in.
 * Also the import's check of a hash (ImportedHashes).
 */
import type { ImportedHash, ImportedHashes, PasswordHasher } from '../domain/ports';
import type { Argon2Hasher, BoundedQueue } from './argon2-hasher';
import { HashRefused, type StructuredHash, parseHash, toStoredForm } from './hashes';

const PLATFORM_PREFIX = '$argon2id$';

export class PlatformPasswordHasher implements PasswordHasher, ImportedHashes {
  constructor(
    private readonly argon2: Argon2Hasher,
    private readonly queue: BoundedQueue,
  ) {}

  hash(password: string): Promise<string> {
    return this.argon2.hash(password);
  }

  async verify(stored: string, password: string): Promise<boolean> {
    if (stored.startsWith(PLATFORM_PREFIX)) return this.argon2.verify(stored, password);
    let parsed;
    try {
      parsed = parseHash(stored);
    } catch {
      // No usable hash (an account imported without one): the cost of a check, then no.
      await this.argon2.verifyDummy(password);
      return false;
    }
    const family = parsed;
    return this.queue.run(() => family.verify(Buffer.from(password, 'utf8')));
  }

  verifyDummy(password: string): Promise<void> {
    return this.argon2.verifyDummy(password);
  }

  needsRehash(stored: string): boolean {
    return !stored.startsWith(PLATFORM_PREFIX) || this.argon2.needsRehash(stored);
  }

  accept(input: string | StructuredHash): ImportedHash {
    try {
      const stored = typeof input === 'string' ? input : toStoredForm(input);
      const parsed = parseHash(stored);
      return { ok: true, stored, family: parsed.family, weak: parsed.weak };
    } catch (err) {
      if (err instanceof HashRefused) return { ok: false, reason: err.message };
      throw err;
    }
  }
}

/**
 * Identity's random secrets kept sealed in its database (migration 1765400000500-sealed-secrets):
 * made once by whichever replica asks first, sealed under the key-encryption key (AAD = the name),
 * opened by the current or a previous one during a rotation, and sealed again by `reseal`. Unlike
 * a key derived from the key-encryption key, such a secret stays the same across a rotation, so
 * what it keyed (the recovery codes' digests) keeps working.
 */
import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { SealingKeys } from '../domain/sealing';

export type SecretName = 'recovery-code-key';

export const sealedSecretAad = (name: string): string => `identity-secret:${name}`;

/** The secret `name` (32 random bytes), made and stored sealed if it does not exist yet. Throws when no configured key opens it. */
export async function sealedSecret(ds: DataSource | EntityManager, name: SecretName, kek: SealingKeys): Promise<Buffer> {
  const fresh = kek.seal(randomBytes(32), sealedSecretAad(name));
  await ds.query('INSERT INTO sealed_secrets (name, sealed) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, fresh]);
  const [row] = await ds.query<Array<{ sealed: Buffer }>>('SELECT sealed FROM sealed_secrets WHERE name = $1', [name]);
  return kek.open(row!.sealed, sealedSecretAad(name));
}

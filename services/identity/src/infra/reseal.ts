/**
 * `node services/identity/dist/main.js reseal`: the end of a rotation of the key-encryption key
 * (SECURITY.md, "Key rotation"). With JWT_KEY_ENCRYPTION_KEY the new key and
 * JWT_KEY_ENCRYPTION_KEY_PREVIOUS the old one(s), every signing key's private half, every TOTP
 * secret, identity's sealed secrets (the recovery codes' key) and the upstream identity providers'
 * client secrets still sealed under an old key is
 * opened and sealed again under the new one (TOTP under its derived key), in one transaction, under the lock that serialises signing-key creation. It
 * can run while the service serves (which opens either); safe to run again (what is current is
 * left). Afterwards JWT_KEY_ENCRYPTION_KEY_PREVIOUS can go. What no configured key opens is
 * counted as unreadable, left as it is, and makes the command exit 1.
 */
import { type Logger, createLogger, openDatabase, readConfig } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { type IdentityConfig, readIdentityConfig, totpSealingKeys } from '../config';
import { providerSecretAad } from '../domain/identity-providers';
import { SealingKeys, totpAad } from '../domain/sealing';
import { entities, migrations } from './schema';
import { sealedSecretAad } from './sealed-secrets';

/** Per kind of sealed data: sealed again under the new key, already under it, opened by no configured key. */
export interface ResealTally {
  resealed: number;
  current: number;
  unreadable: number;
}

export interface ResealReport {
  readonly signingKeys: ResealTally;
  readonly totpSecrets: ResealTally;
  /** Identity's random secrets (the recovery codes' key: infra/sealed-secrets.ts). */
  readonly secrets: ResealTally;
  /** Upstream identity providers' client secrets (issue #40; deleted providers' too). */
  readonly providerSecrets: ResealTally;
}

type Query = (sql: string, params?: unknown[]) => Promise<unknown>;

/** Opens each row's sealed value with any configured key and seals it again under the current one when an old one opened it. */
async function resealRows(query: Query, rows: Array<{ id: string; sealed: Buffer; aad: string }>, keys: SealingKeys, update: string): Promise<ResealTally> {
  const tally: ResealTally = { resealed: 0, current: 0, unreadable: 0 };
  for (const r of rows) {
    let opened: { plaintext: Buffer; stale: boolean };
    try {
      opened = keys.openAny(r.sealed, r.aad);
    } catch {
      tally.unreadable++;
      continue;
    }
    if (!opened.stale) {
      tally.current++;
      continue;
    }
    await query(update, [r.id, keys.seal(opened.plaintext, r.aad)]);
    tally.resealed++;
  }
  return tally;
}

export async function reseal(ds: DataSource, jwt: Pick<IdentityConfig['jwt'], 'keyEncryptionKey' | 'previousKeyEncryptionKeys'>): Promise<ResealReport> {
  const kek = new SealingKeys(jwt.keyEncryptionKey, jwt.previousKeyEncryptionKeys);
  const totp = totpSealingKeys(jwt);
  return ds.transaction(async (m) => {
    const query: Query = (sql, params) => m.query(sql, params);
    // The key ring takes this lock to add a key: none is made (under either key) meanwhile.
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', ['identity:signing-keys']);
    const keys = (await query('SELECT kid, private_key FROM signing_keys ORDER BY kid FOR UPDATE')) as Array<{ kid: string; private_key: Buffer }>;
    const signingKeys = await resealRows(query, keys.map((k) => ({ id: k.kid, sealed: k.private_key, aad: k.kid })), kek, 'UPDATE signing_keys SET private_key = $2 WHERE kid = $1');
    const totpRows = (await query('SELECT user_id, sealed_secret FROM mfa_totp ORDER BY user_id FOR UPDATE')) as Array<{ user_id: string; sealed_secret: Buffer }>;
    const totpSecrets = await resealRows(
      query,
      totpRows.map((t) => ({ id: t.user_id, sealed: t.sealed_secret, aad: totpAad(t.user_id) })),
      totp,
      'UPDATE mfa_totp SET sealed_secret = $2 WHERE user_id = $1',
    );
    const stored = (await query('SELECT name, sealed FROM sealed_secrets ORDER BY name FOR UPDATE')) as Array<{ name: string; sealed: Buffer }>;
    const secrets = await resealRows(query, stored.map((r) => ({ id: r.name, sealed: r.sealed, aad: sealedSecretAad(r.name) })), kek, 'UPDATE sealed_secrets SET sealed = $2 WHERE name = $1');
    const providers = (await query('SELECT id, sealed_client_secret FROM identity_providers WHERE sealed_client_secret IS NOT NULL ORDER BY id FOR UPDATE')) as Array<{ id: string; sealed_client_secret: Buffer }>;
    const providerSecrets = await resealRows(
      query,
      providers.map((p) => ({ id: p.id, sealed: p.sealed_client_secret, aad: providerSecretAad(p.id) })),
      kek,
      'UPDATE identity_providers SET sealed_client_secret = $2 WHERE id = $1',
    );
    return { signingKeys, totpSecrets, secrets, providerSecrets };
  });
}

/** The command: identity's configuration from the environment (as the service reads it), its database, the report logged. */
export async function runReseal(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: IdentityConfig;
  try {
    config = readConfig(env, (e) => readIdentityConfig(e));
  } catch (err) {
    process.stderr.write(`identity reseal: ${(err as Error).message}\n`);
    return 2;
  }
  const logger: Logger = createLogger({ level: 'info', service: 'identity' });
  const ds = await openDatabase({ url: config.databaseUrl, name: 'identity', entities, migrations, logger, migrate: false, poolSize: 1 });
  try {
    const report = await reseal(ds, config.jwt);
    const unreadable = report.signingKeys.unreadable + report.totpSecrets.unreadable + report.secrets.unreadable + report.providerSecrets.unreadable;
    logger[unreadable > 0 ? 'error' : 'info'](
      { ...report, previousKeys: config.jwt.previousKeyEncryptionKeys.length },
      unreadable > 0 ? 'reseal: some sealed data opens with no configured key (left as it is)' : 'reseal: everything is sealed under the current key-encryption key',
    );
    return unreadable > 0 ? 1 : 0;
  } catch (err) {
    logger.error({ err }, 'reseal failed (nothing changed)');
    return 1;
  } finally {
    await ds.destroy().catch(() => undefined);
  }
}

#!/usr/bin/env node
/**
 * What an auditor verifies, exported as JSON Lines on stdout (for verify.ts):
 *
 *   node services/audit/dist/cli/export.js checkpoints > checkpoints.jsonl   # NATS_URL (+ NATS_* credentials)
 *   node services/audit/dist/cli/export.js entries > entries.jsonl           # AUDIT_DATABASE_URL (reading is enough)
 *   node services/audit/dist/cli/export.js public-key                         # AUDIT_CHECKPOINT_SIGNING_KEY[_FILE]
 *
 * Export the checkpoints first: one signed after the entries were read would be past their end.
 * `public-key` prints the key id, the public key (base64 of its 32 bytes, as verify takes it) and
 * its PEM, derived from the signing key (the operator's side; the auditor gets only the public key).
 */
import { type Env, JetStreamEventBus, type Logger, createDataSource, createLogger, readConfig, readRuntimeConfig } from '@iam/platform';
import type { DataSource } from 'typeorm';
import { checkpointJson, checkpointSigner } from '../domain/checkpoint';
import type { CheckpointLog } from '../domain/ports';
import { BusCheckpointLog } from '../infra/checkpoint-log';
import { entities, migrations } from '../infra/schema';
import { PgAuditLog } from '../infra/store';
import { entryJson } from './jsonl';

const BATCH = 5_000;

/** Every retained entry, in seq order; returns how many. */
export async function exportEntries(ds: DataSource, out: (line: string) => void): Promise<number> {
  const log = new PgAuditLog(ds.manager);
  let n = 0;
  for (let after = 0; ; ) {
    const batch = await log.entriesAfter(after, BATCH);
    if (batch.length === 0) return n;
    for (const e of batch) out(JSON.stringify(entryJson(e)));
    n += batch.length;
    after = batch[batch.length - 1]!.seq;
  }
}

/** Every checkpoint the log holds, oldest first; returns how many. */
export async function exportCheckpoints(log: CheckpointLog, out: (line: string) => void): Promise<number> {
  const all = await log.read(Number.MAX_SAFE_INTEGER);
  for (const c of all) out(JSON.stringify(checkpointJson(c)));
  return all.length;
}

async function main(command: string | undefined, env: Env, out: (line: string) => void, logger: Logger): Promise<number> {
  if (command === 'entries') {
    const { url } = readConfig(env, (e) => ({ url: e.url('AUDIT_DATABASE_URL', ['postgres', 'postgresql']) }));
    const ds = createDataSource({ url, name: 'audit-export', entities, migrations, logger, poolSize: 1 });
    await ds.initialize();
    try {
      logger.info({ entries: await exportEntries(ds, out) }, 'entries exported');
    } finally {
      await ds.destroy();
    }
    return 0;
  }
  if (command === 'checkpoints') {
    const runtime = readConfig(env, (e) => {
      const r = readRuntimeConfig(e);
      if (!r.natsUrl) e.problem('NATS_URL', 'is required');
      return r;
    });
    const bus = new JetStreamEventBus({ url: runtime.natsUrl!, name: 'audit-export', logger, connection: runtime.nats, publishTimeoutMs: 10_000 });
    try {
      logger.info({ checkpoints: await exportCheckpoints(new BusCheckpointLog(bus), out) }, 'checkpoints exported');
    } finally {
      await bus.close();
    }
    return 0;
  }
  if (command === 'public-key') {
    const { seed } = readConfig(env, (e) => ({ seed: e.key('AUDIT_CHECKPOINT_SIGNING_KEY', { required: true }) ?? Buffer.alloc(32) }));
    const key = checkpointSigner(seed);
    out(JSON.stringify({ keyId: key.keyId, publicKey: key.publicKey }));
    out(key.publicKeyPem.trimEnd());
    return 0;
  }
  process.stderr.write('usage: export entries | checkpoints | public-key (JSON Lines on stdout; see services/README.md, "The audit trail")\n');
  return 2;
}

if (require.main === module) {
  // Logs go to stderr: stdout is the export.
  const logger = createLogger({ level: 'warn', service: 'audit-export', destination: process.stderr });
  main(process.argv[2], process.env, (line) => process.stdout.write(`${line}\n`), logger).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`export failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

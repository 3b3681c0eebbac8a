#!/usr/bin/env node
/**
 * The auditor's verification, with nothing but the checkpoint public key and two exports (see
 * export.ts, or the API for the entries):
 *
 *   node services/audit/dist/cli/verify.js --public-key <base64 | PEM file> \
 *     --entries entries.jsonl --checkpoints checkpoints.jsonl [--retention-days 365]
 *
 * Runs the service's own verifier (domain/verifier.ts) over the entries in seq order, prints the
 * report as JSON and exits 0 when the chain holds, 1 when it does not (the report's reason names
 * the cut; also when a checkpoint is not validly signed by any given key), 2 on bad arguments or
 * unreadable input. `--public-key` may be repeated (a key rotated: give the old one too).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GENESIS_HASH } from '../domain/chain';
import { type CheckpointKey, checkpointKey } from '../domain/checkpoint';
import { ChainVerifier } from '../domain/verifier';
import { parseCheckpointLine, parseEntry, readJsonl } from './jsonl';

const USAGE =
  'usage: verify --public-key <base64 | PEM file> --entries <entries.jsonl> --checkpoints <checkpoints.jsonl> [--retention-days <days>]\n' +
  '  Export the checkpoints before the entries (a checkpoint signed in between would be past the entries).';

export async function verifyCommand(argv: readonly string[], out: (text: string) => void): Promise<number> {
  let keys: CheckpointKey[];
  let files: { entries: string; checkpoints: string };
  let retentionDays: number | undefined;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        'public-key': { type: 'string', multiple: true },
        entries: { type: 'string' },
        checkpoints: { type: 'string' },
        'retention-days': { type: 'string' },
      },
      strict: true,
    });
    if (!values['public-key']?.length || !values.entries || !values.checkpoints) throw new Error('--public-key, --entries and --checkpoints are required');
    keys = values['public-key'].map((k) => checkpointKey(existsSync(k) ? readFileSync(k, 'utf8') : k));
    files = { entries: values.entries, checkpoints: values.checkpoints };
    if (values['retention-days'] !== undefined) {
      retentionDays = Number(values['retention-days']);
      if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 36_500) throw new Error('--retention-days must be a whole number from 1 to 36500');
    }
  } catch (err) {
    out(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    const checkpoints = await readJsonl(files.checkpoints, parseCheckpointLine);
    const entries = (await readJsonl(files.entries, parseEntry)).sort((a, b) => a.seq - b.seq);
    const first = entries[0];
    const verifier = new ChainVerifier({
      start: first ? { firstSeq: first.seq, anchorHash: first.prevHash } : { firstSeq: 1, anchorHash: GENESIS_HASH },
      checkpoints,
      keys,
      retention: retentionDays === undefined ? undefined : { days: retentionDays, now: new Date() },
    });
    for (const e of entries) if (!verifier.add(e)) break;
    const chain = verifier.finish();
    // The auditor names every key that signed: a checkpoint none of them verifies is a forgery (or a key left out).
    const report =
      chain.ok && chain.checkpointsRejected > 0
        ? { ...chain, ok: false, reason: `${chain.checkpointsRejected} checkpoint(s) are not validly signed by the given key(s)` }
        : chain;
    out(JSON.stringify({ ...report, keyIds: keys.map((k) => k.keyId) }, null, 2));
    return report.ok ? 0 : 1;
  } catch (err) {
    out((err as Error).message);
    return 2;
  }
}

if (require.main === module) {
  void verifyCommand(process.argv.slice(2), (text) => process.stdout.write(`${text}\n`)).then((code) => process.exit(code));
}

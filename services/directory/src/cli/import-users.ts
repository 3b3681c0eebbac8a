/**
 * `--import FILE`: the bulk import for operators and the chart's Job, straight into the directory
 * database (no gateway): NDJSON, or a JSON array when the file ends in `.json` (or `--format`).
 * Prints the same NDJSON answer as POST /api/v1/users/import (a line per input line, then the
 * summary) and records the job once (`directory.users.imported`, source "cli"). Migrates the
 * database first. A line's TOTP factor goes to identity (ImportTotp) when INTERNAL_CALL_KEY and
 * IDENTITY_GRPC_TARGET are set (with GRPC_TLS_* as the services use them); a rerun retries one that
 * failed. Exit codes: 0 every line created or skipped (its TOTP factor, if any, enrolled), 3 some
 * refused or a TOTP factor not imported, 1 failed, 2 usage.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { AppError, type Env, type ImportFormat, createLogger, createMetrics, grpcCredentials, inBatches, openDatabase, readConfig, readGrpcTlsConfig, readImportRecords } from '@iam/platform';
import { type DirectoryConfig, readDirectoryConfig } from '../config';
import { grpcTotpImporter } from '../infra/identity-totp';
import { entities, migrations } from '../infra/schema';
import { createDirectoryUseCases } from '../service';

const BATCH = 500;

export function readImportArgs(argv: readonly string[]): { file: string; format: ImportFormat } {
  const { values } = parseArgs({ args: [...argv], options: { import: { type: 'string' }, format: { type: 'string' } }, strict: true });
  if (!values.import) throw new AppError('VALIDATION', 'missing --import FILE');
  const format = values.format ?? (values.import.endsWith('.json') ? 'json' : 'ndjson');
  if (format !== 'json' && format !== 'ndjson') throw new AppError('VALIDATION', '--format must be ndjson or json');
  return { file: values.import, format: format === 'json' ? 'json-array' : 'ndjson' };
}

/** Returns the process exit code; `out` receives the NDJSON answer. */
export async function runImport(argv: readonly string[], env: Env, out: (line: string) => void = (l) => process.stdout.write(l)): Promise<number> {
  let args: ReturnType<typeof readImportArgs>;
  let config: DirectoryConfig;
  let caller: { key: Buffer | undefined; tls: ReturnType<typeof readGrpcTlsConfig> };
  try {
    args = readImportArgs(argv);
    ({ config, caller } = readConfig(env, (e) => ({ config: readDirectoryConfig(e), caller: { key: e.key('INTERNAL_CALL_KEY', { required: false }), tls: readGrpcTlsConfig(e) } })));
  } catch (err) {
    process.stderr.write(`import: ${(err as Error).message}\n`);
    return 2;
  }
  const logger = createLogger({ level: 'warn', service: 'directory' });
  const ds = await openDatabase({ url: config.databaseUrl, name: 'directory', entities, migrations, logger });
  try {
    const totp = caller.key ? grpcTotpImporter(() => config.identityTarget, { signer: { key: caller.key, from: 'directory' }, metrics: createMetrics({ defaultMetrics: false }), credentials: grpcCredentials(caller.tls).client }) : undefined;
    const imports = createDirectoryUseCases(ds, config, undefined, undefined, totp).imports;
    let totpFailed = false;
    const jobId = randomUUID();
    const counts = { created: 0, skipped: 0, refused: 0 };
    try {
      for await (const batch of inBatches(readImportRecords(createReadStream(args.file), args.format), BATCH)) {
        for (const r of await imports.importBatch(null, jobId, batch)) {
          counts[r.status]++;
          if (r.status !== 'refused' && r.totp?.startsWith('not imported')) totpFailed = true;
          const line = r.status === 'created' ? { line: r.line, status: r.status, id: r.userId, ...(r.hashFamily ? { hashFamily: r.hashFamily } : {}) } : r;
          out(`${JSON.stringify(line)}\n`);
        }
      }
    } finally {
      // The job's one audit entry, also for a job that stopped early.
      await imports.finish(jobId, counts, 'cli');
    }
    out(`${JSON.stringify({ summary: { jobId, ...counts, complete: true } })}\n`);
    totp?.close();
    return counts.refused > 0 || totpFailed ? 3 : 0;
  } catch (err) {
    process.stderr.write(`import: ${err instanceof AppError ? (err.detail ?? err.title) : (err as Error).message}\n`);
    return 1;
  } finally {
    await ds.destroy();
  }
}

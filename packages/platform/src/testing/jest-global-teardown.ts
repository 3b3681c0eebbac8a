/**
 * Jest global teardown: stops the embedded PostgreSQL when global setup started one, and says in
 * one line, after jest's summary, which test files skipped for want of something on the machine
 * and the command that provides it (skips.ts).
 */
import { rmSync } from 'node:fs';
import { SKIPS_DIR_ENV, skipSummary } from './skips';

export default async function teardown(): Promise<void> {
  await globalThis.__IAM_EMBEDDED_PG__?.stop();
  const dir = process.env[SKIPS_DIR_ENV];
  if (!dir) return;
  const summary = skipSummary(dir);
  if (summary) process.stderr.write(`\n${summary}\n`);
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Tests skipped for want of something on the machine (Chromium, a built tree): told once, in one
 * line at the end of the run (jest-global-teardown.ts), not only in a warning lost among the
 * run's output (issue #35). A test file records its skip as it loads; global setup makes the
 * directory the records go to (SKIPS_DIR_ENV), shared by every worker.
 */
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The environment variable naming the run's directory of skip records (set by global setup). */
export const SKIPS_DIR_ENV = 'IAM_TEST_SKIPS_DIR';

export interface Skip {
  /** What is skipped: the test file (its name is shown). */
  readonly file: string;
  /** Why, e.g. "/usr/bin/chromium is missing". */
  readonly reason: string;
  /** What to run for them to run, e.g. "apt-get install -y chromium". */
  readonly fix: string;
}

/** Records a skip for the run's summary, and says it now too (running one file shows it at once). */
export function recordSkip(skip: Skip, dir = process.env[SKIPS_DIR_ENV]): void {
  console.warn(`${basename(skip.file)} skipped: ${skip.reason} (${skip.fix})`);
  if (!dir || !existsSync(dir)) return;
  appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify(skip)}\n`);
}

/** The run's skips in one line each reason (files named, the fix given), or undefined when none. */
export function skipSummary(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const byCause = new Map<string, { reason: string; fix: string; files: Set<string> }>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const s = JSON.parse(line) as Skip;
      const key = `${s.reason}\n${s.fix}`;
      const cause = byCause.get(key) ?? { reason: s.reason, fix: s.fix, files: new Set<string>() };
      cause.files.add(basename(s.file));
      byCause.set(key, cause);
    }
  }
  if (byCause.size === 0) return undefined;
  return [...byCause.values()]
    .map((c) => `Skipped (${c.reason}): ${c.files.size} test file${c.files.size === 1 ? '' : 's'}, ${[...c.files].sort().join(', ')}. To run them: ${c.fix}`)
    .join('\n');
}

/**
 * Where the browser tests find Chromium (Debian's, launched through playwright-core by each
 * suite): /usr/bin/chromium, or IAM_TEST_CHROMIUM (a path that does not exist shows what a
 * machine without it does). A suite that cannot run records its skip (skips.ts).
 */
import { existsSync } from 'node:fs';
import { recordSkip } from './skips';

export const CHROMIUM = process.env.IAM_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** The command that installs it (Debian, Ubuntu). */
export const CHROMIUM_INSTALL = 'apt-get install -y chromium';

/** Whether Chromium is there. */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/**
 * Whether the browser tests of `file` can run (Chromium there, and `built` files, when given,
 * present); when not, the skip is recorded for the run's summary.
 */
export function browserTestsRunnable(file: string, built: { paths: readonly string[]; fix: string } = { paths: [], fix: '' }): boolean {
  if (!hasChromium()) {
    recordSkip({ file, reason: `${CHROMIUM} is missing`, fix: CHROMIUM_INSTALL });
    return false;
  }
  const missing = built.paths.find((p) => !existsSync(p));
  if (missing) {
    recordSkip({ file, reason: `${missing} is not built`, fix: built.fix });
    return false;
  }
  return true;
}

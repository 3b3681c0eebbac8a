/**
 * The run's skip summary (issue #35): what the test files record as they skip for want of
 * Chromium or a build becomes one line per cause, naming the files and the command that
 * provides what is missing, whichever worker recorded them; nothing when nothing was skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserTestsRunnable } from './browser';
import { recordSkip, skipSummary } from './skips';

describe('skip summary', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skips-'));
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it('nothing skipped: no line', () => {
    expect(skipSummary(dir)).toBeUndefined();
    expect(skipSummary(join(dir, 'gone'))).toBeUndefined();
  });

  it('one line per cause, naming each file once and the command that provides what is missing', () => {
    const chromium = { reason: '/usr/bin/chromium is missing', fix: 'apt-get install -y chromium' };
    recordSkip({ file: '/w/deploy/all-in-one/test/oidc.e2e.test.ts', ...chromium }, dir);
    recordSkip({ file: '/w/console/test/console.e2e.test.ts', ...chromium }, dir);
    recordSkip({ file: '/w/deploy/all-in-one/test/oidc.e2e.test.ts', ...chromium }, dir);
    recordSkip({ file: '/w/console/test/mailbox.e2e.test.ts', reason: '/w/console/dist/reset-password.html is not built', fix: 'make build' }, dir);
    expect(skipSummary(dir)!.split('\n')).toEqual([
      'Skipped (/usr/bin/chromium is missing): 2 test files, console.e2e.test.ts, oidc.e2e.test.ts. To run them: apt-get install -y chromium',
      'Skipped (/w/console/dist/reset-password.html is not built): 1 test file, mailbox.e2e.test.ts. To run them: make build',
    ]);
    // Said at once too, for a run of one file.
    expect(console.warn).toHaveBeenCalledWith(expect.stringContaining('oidc.e2e.test.ts skipped: /usr/bin/chromium is missing (apt-get install -y chromium)'));
  });

  it('a suite whose build is missing records it (with Chromium present or not, one cause)', () => {
    const saved = process.env.IAM_TEST_SKIPS_DIR;
    process.env.IAM_TEST_SKIPS_DIR = dir;
    try {
      expect(browserTestsRunnable('/w/x.e2e.test.ts', { paths: [join(dir, 'not-built.html')], fix: 'make build' })).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.IAM_TEST_SKIPS_DIR;
      else process.env.IAM_TEST_SKIPS_DIR = saved;
    }
    expect(skipSummary(dir)).toMatch(/^Skipped \(.+ is (missing|not built)\): 1 test file, x\.e2e\.test\.ts\. To run them: (make build|apt-get install -y chromium)$/);
  });
});

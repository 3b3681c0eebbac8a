/**
 * What the browser tests here share: Debian's Chromium (the platform's CHROMIUM: IAM_TEST_CHROMIUM
 * may name another path) and the flags it needs as root (the console's tests have the same in
 * console/test/pages.ts), and axe-core's serious and critical violations on a page. A suite asks
 * browserTestsRunnable, which records its skip for the run's summary when it cannot run.
 */
import { readFileSync } from 'node:fs';
import { CHROMIUM } from '@iam/platform/testing';
import { type Browser, type Page, chromium } from 'playwright-core';

export { CHROMIUM, browserTestsRunnable } from '@iam/platform/testing';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: Array<{ target: string[] }>;
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page (with the elements they name). */
export async function axe(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  // A string: this file is compiled without the DOM's types.
  const violations = await page.evaluate<AxeViolation[]>('axe.run(document).then((r) => r.violations)');
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

/**
 * What the browser tests here share: Debian's Chromium (the platform's CHROMIUM: IAM_TEST_CHROMIUM
 * may name another path) and the flags it needs as root (the console's tests have the same in
 * console/test/browser.ts), a context with the pages' CSP enforced, and axe-core's serious and
 * critical violations on a page. A suite asks browserTestsRunnable, which records its skip for the
 * run's summary when it cannot run.
 */
import { readFileSync } from 'node:fs';
import { CHROMIUM } from '@iam/platform/testing';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';

export { CHROMIUM, browserTestsRunnable, hasChromium } from '@iam/platform/testing';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * A context that enforces every page's CSP (never bypassCSP: the hosted pages' policy must hold
 * for the flows as a user's browser runs them), with its CSP violations collected.
 */
export async function cspContext(browser: Browser): Promise<{ context: BrowserContext; page: Page; violations: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, bypassCSP: false });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return { context, page, violations };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: Array<{ target: string[] }>;
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page (with the elements they name). axe is
 * evaluated through the DevTools protocol (Runtime.evaluate), which a page's CSP does not govern:
 * no inline script tag is added, so the page keeps its policy enforced (script-src 'self').
 */
export async function axe(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE_SOURCE}\n;void 0`);
  // A string: this file is compiled without the DOM's types.
  const violations = await page.evaluate<AxeViolation[]>('axe.run(document).then((r) => r.violations)');
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

/** The browser the console's tests drive: Debian's Chromium on a fresh profile, and axe-core. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM } from '@iam/platform/testing';
import { type BrowserContext, type Page, chromium } from 'playwright-core';

/** Debian's Chromium (the platform's CHROMIUM: IAM_TEST_CHROMIUM may name another path), launched as root needs it (the project's browser tests all use these). */
export { CHROMIUM };
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Chromium on a fresh profile (a temporary directory named after `prefix`; the caller removes it),
 * at desktop size, every page's CSP enforced (never bypassCSP: the pages' policy must hold as a
 * user's browser runs them; axe-core is evaluated through the DevTools protocol, which a page's CSP
 * does not govern). `cspViolations` collects what Chromium refused, on every tab, for the tests to
 * check.
 */
export async function launchProfile(prefix: string): Promise<{ context: BrowserContext; userDataDir: string; cspViolations: string[] }> {
  const userDataDir = mkdtempSync(join(tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 800 },
    bypassCSP: false,
  });
  const cspViolations: string[] = [];
  watchCsp(context, cspViolations);
  return { context, userDataDir, cspViolations };
}

/** Collects the CSP refusals Chromium reports on every tab of `context` into `into`. */
export function watchCsp(context: BrowserContext, into: string[]): void {
  const watch = (page: Page) =>
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) into.push(`${page.url()}: ${m.text()}`);
    });
  context.pages().forEach(watch);
  context.on('page', watch);
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

/** axe-core on a page (any tab: the hosted pages too): the serious and critical violations. */
export async function axeOf(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document)).violations;
  });
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

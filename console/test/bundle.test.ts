/**
 * The console's JavaScript budget (README: 250 KB gzipped, React included), measured on the
 * built files (console/dist, `make build`): what index.html loads (its module script and
 * modulepreloads, and their static imports), gzipped. GraphiQL is a second entry
 * (graphiql.html): none of its chunks may be loaded by the console. Skipped without a build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const DIST = join(__dirname, '..', 'dist');
const BUDGET = 250 * 1024;
const suite = existsSync(join(DIST, 'index.html')) ? describe : describe.skip;

/** The scripts a page loads, following static imports between chunks. */
function scriptsOf(page: string): string[] {
  const html = readFileSync(join(DIST, page), 'utf8');
  const todo = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const seen = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(join(DIST, file), 'utf8');
    for (const m of code.matchAll(/(?:^|[;\s])import\s*(?:[\w{}$,\s*]+from\s*)?["']\.\/([\w.-]+\.js)["']/g)) todo.push(`assets/${m[1]}`);
  }
  return [...seen].sort();
}

suite('console bundle', () => {
  it('the console loads at most 250 KB of gzipped JavaScript, and nothing of GraphiQL', () => {
    const console_ = scriptsOf('index.html');
    const gz = console_.reduce((n, f) => n + gzipSync(readFileSync(join(DIST, f))).length, 0);
    console.log(`console JS: ${console_.join(', ')}: ${(gz / 1024).toFixed(1)} KB gzipped`);
    expect(gz).toBeLessThan(BUDGET);
    const graphiql = scriptsOf('graphiql.html').filter((f) => !console_.includes(f));
    expect(graphiql.length).toBeGreaterThan(0);
    expect(console_.filter((f) => /monaco|graphiql|worker/i.test(f))).toEqual([]);
  });

  it.each(['reset-password.html', 'verify-email.html'])('the hosted page %s loads at most 100 KB of gzipped JavaScript, nothing of GraphiQL or the console app', (page) => {
    const scripts = scriptsOf(page);
    const gz = scripts.reduce((n, f) => n + gzipSync(readFileSync(join(DIST, f))).length, 0);
    console.log(`${page} JS: ${scripts.join(', ')}: ${(gz / 1024).toFixed(1)} KB gzipped`);
    expect(gz).toBeLessThan(100 * 1024);
    expect(scripts.filter((f) => /monaco|graphiql|worker/i.test(f))).toEqual([]);
    // Neither the console's entry nor TanStack Query: these pages hold no session.
    expect(scripts.some((f) => /^assets\/index-/.test(f))).toBe(false);
  });

  it('the account page loads at most 150 KB of gzipped JavaScript, nothing of GraphiQL or the console app', () => {
    const scripts = scriptsOf('account.html');
    const gz = scripts.reduce((n, f) => n + gzipSync(readFileSync(join(DIST, f))).length, 0);
    console.log(`account.html JS: ${scripts.join(', ')}: ${(gz / 1024).toFixed(1)} KB gzipped`);
    expect(gz).toBeLessThan(150 * 1024);
    expect(scripts.filter((f) => /monaco|graphiql|worker/i.test(f))).toEqual([]);
    expect(scripts.some((f) => /^assets\/index-/.test(f))).toBe(false);
  });
});

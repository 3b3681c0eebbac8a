/**
 * Structural checks of the Helm chart (helm/iam) and the compose file, runnable without helm:
 * Chart.yaml fields, values.yaml against values.schema.json, every value documented, template
 * blocks balanced, every named template defined, every static .Values path present, the
 * process paths pointing at real entry points, and every variable the chart or the compose file
 * sets being one the application reads. With a helm binary (HELM_BIN, or `helm` on PATH) it also
 * lints the chart; with helm, or else the Go-template renderer of render/ (Go's text/template and
 * sprig from Debian's packages: golang-go, golang-github-masterminds-sprig-dev,
 * golang-gopkg-yaml.v3-dev), it renders the chart and checks the manifests and validateValues;
 * with /usr/bin/docker-compose it runs `docker-compose config -q`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { isMap, isSeq, parse, parseAllDocuments, parseDocument, visit } from 'yaml';
import {
  type Json, type JsonObject, chartDir, chartRendering, containerOf, envOf, fixturesDir, hasK8sModels, isObject, k8sTypeErrors, nameOf, named, podSpec, repoRoot, str,
} from './manifests';

const templatesDir = join(chartDir, 'templates');
const composeDir = join(repoRoot, 'deploy');

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
/** A values file written for one test (values --set cannot express, such as a list). */
const valuesFile = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'iam-values-')), 'values.yaml');
  writeFileSync(file, text);
  return file;
};

const values = parse(read(chartDir, 'values.yaml')) as JsonObject;
const schema = JSON.parse(read(chartDir, 'values.schema.json')) as Schema;
const templateFiles = readdirSync(templatesDir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
const templates = new Map(templateFiles.map((f) => [f, read(templatesDir, f)]));
const fixtures = readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml'));
/** The processes the chart deploys (iam.components). */
const COMPONENTS = ['gateway', 'identity', 'directory', 'notification', 'commerce', 'audit'];
/** The services with a database of their own and a migration Job (iam.databaseServices). */
const SERVICES = ['directory', 'identity', 'notification', 'commerce', 'audit'];

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

  it('values-production.yaml validates against the schema and leaves /docs out of the Ingress', () => {
    const production = parse(read(chartDir, 'values-production.yaml')) as JsonObject;
    expect(errorsOf(withValues(production))).toBe('No errors');
    expect((production.ingress as JsonObject).exposeDocs).toBe(false);
  });

  it('GRAPHQL_INTROSPECTION: authenticated by default, off in values-production.yaml; the schema takes public, authenticated or off only', () => {
    const gatewayEnv = (v: JsonObject) => (v.gateway as JsonObject).env as JsonObject;
    expect(gatewayEnv(values).GRAPHQL_INTROSPECTION).toBe('authenticated');
    const production = withValues(parse(read(chartDir, 'values-production.yaml')) as JsonObject);
    expect(gatewayEnv(production).GRAPHQL_INTROSPECTION).toBe('off');
    for (const [value, valid] of [['public', true], ['authenticated', true], ['off', true], ['yes', false], [false, false], [true, false]] as const) {
      const v = structuredClone(values);
      gatewayEnv(v).GRAPHQL_INTROSPECTION = value;
      expect([value, validate(v)]).toEqual([value, valid]);
    }
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
    ['a certificate lifetime in days', (v) => (((v.grpcTls as JsonObject).certManager as JsonObject).duration = '90d')],
    ['an unknown certificate key algorithm', (v) => ((((v.grpcTls as JsonObject).certManager as JsonObject).privateKey as JsonObject).algorithm = 'DSA')],
    ['an issuer without a kind', (v) => ((((v.grpcTls as JsonObject).certManager as JsonObject).issuerRef as JsonObject).kind = '')],
    ['an unknown cert-manager setting', (v) => (((v.grpcTls as JsonObject).certManager as JsonObject).dnsNames = ['x'])],
    ['an unknown internalCall key', (v) => ((v.internalCall as JsonObject).secret = 'x')],
    ['extraVolumes that are not a list', (v) => ((v.identity as JsonObject).extraVolumes = { keys: {} })],
    ['an audit retention that is not a number of days', (v) => (((v.audit as JsonObject).env as JsonObject).AUDIT_RETENTION_DAYS = '1y')],
    ['an audit retention of no days', (v) => (((v.audit as JsonObject).env as JsonObject).AUDIT_RETENTION_DAYS = 0)],
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
      (values.auditCheckpoint as JsonObject).signingKey,
      (values.internalCall as JsonObject).key,
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
  const sourceDirs = ['gateway/src', 'services/identity/src', 'services/directory/src', 'services/notification/src', 'services/commerce/src', 'services/audit/src', 'packages/platform/src'];
  const read_ = (dir: string): string[] =>
    readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? read_(join(dir, e.name)) : /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [read(repoRoot, dir, e.name)] : [],
    );
  const sourceFiles = (dir: string): string[] =>
    readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
    );
  const known = new Set(sourceDirs.flatMap(read_).flatMap((t) => [...t.matchAll(/(?:[`'"]|\benv\.)([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]!)));
  // Names built from a service name in the sources (`${upper}_METRICS_PORT`) or read by the CLI.
  for (const svc of ['IDENTITY', 'DIRECTORY', 'NOTIFICATION', 'COMMERCE', 'AUDIT']) {
    known.add(`${svc}_METRICS_PORT`);
    known.add(`${svc}_DATABASE_RUNTIME_ROLE`);
  }
  for (const n of ['JWT_KEY_ENCRYPTION_KEY_FILE', 'EMAIL_ACTION_KEY_FILE', 'AUDIT_CHECKPOINT_SIGNING_KEY_FILE']) known.add(n);
  const helpers = templates.get('_helpers.tpl')!;

  it('no variable can turn on the development mailbox: only the all-in-one (make run) makes one, never a process the chart or compose runs', () => {
    // The chart can set any variable (extraEnvVars), so the mailbox must not hang on one: no name
    // the processes read mentions it, and no process's own source constructs it or hands it to the
    // gateway (notification defines it; deploy/all-in-one/src, not a chart image entry point, wires it).
    expect([...known].filter((n) => /MAILBOX/.test(n))).toEqual([]);
    const constructs = sourceDirs.flatMap((dir) =>
      sourceFiles(dir).filter((f) => !f.endsWith('infra/mailbox.ts') && /new MemoryMailbox\b|devMailbox:\s*(?!rt\.devMailbox|deps\.devMailbox|opts\.devMailbox)[^,}\s]/.test(read(repoRoot, f))),
    );
    expect(constructs).toEqual([]);
    const processes = [...templates.values(), read(composeDir, 'docker-compose.yml')].join('\n');
    expect(processes).not.toMatch(/all-in-one/);
  });

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

  it('renders the six components from one Deployment and one Service template', () => {
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

  it('for developers: Redis for the gateway, Mailpit behind SMTP_URL, an optional OpenTelemetry collector, images pinned to a minor version', () => {
    type Svc = { image?: string; profiles?: string[]; environment?: Record<string, unknown>; depends_on?: Record<string, unknown>; volumes?: string[]; build?: { args?: Record<string, string> } };
    const compose = parse(read(composeDir, 'docker-compose.yml'), { merge: true }) as { services: Record<string, Svc> };
    const svc = compose.services;
    const defaultOf = (v: unknown) => /^\$\{\w+:?-(.*)\}$/.exec(String(v))?.[1];
    // Every third-party image: ${X_IMAGE:-name:tag}, the tag naming at least major.minor.
    for (const [name, s] of Object.entries(svc).filter(([, x]) => !String(x.image).includes('IAM_IMAGE'))) {
      expect([name, defaultOf(s.image)]).toEqual([name, expect.stringMatching(/^[\w./-]+:v?\d+\.\d+(\.\d+)?(-[a-z]+)?$/)]);
    }
    expect(defaultOf(svc.redis!.image)).toMatch(/^redis:/);
    expect(defaultOf(svc.gateway!.environment!.REDIS_URL)).toBe('redis://redis:6379/0');
    expect(svc.gateway!.depends_on).toHaveProperty('redis');
    expect(defaultOf(svc.mailpit!.image)).toMatch(/^axllent\/mailpit:v\d+\.\d+$/);
    expect(defaultOf(svc.notification!.environment!.SMTP_URL)).toBe('smtp://mailpit:1025');
    expect(defaultOf(svc.notification!.environment!.EMAIL_ACTION_BASE_URL)).toMatch(/^https?:\/\//);
    expect(svc['otel-collector']!.profiles).toEqual(['otel']);
    expect(existsSync(join(composeDir, 'otel', 'collector.yaml'))).toBe(true);
    expect(read(composeDir, 'otel', 'collector.yaml')).toContain('0.0.0.0:4318');
    expect(Object.keys(svc.identity!.environment!)).toEqual(expect.arrayContaining(['OTEL_EXPORTER_OTLP_ENDPOINT', 'DEPLOYMENT_ENVIRONMENT']));
    // The image is built from the base NODE_IMAGE names (a digest may be given there).
    expect(svc.gateway!.build!.args!.NODE_IMAGE).toMatch(/^\$\{NODE_IMAGE:-node:\d+\.\d+\.\d+-/);
    expect(read(repoRoot, 'deploy', 'Dockerfile')).toMatch(/^FROM \$\{NODE_IMAGE\} AS runtime$/m);
  });

  run('deploy/docker-compose.yml passes `docker-compose config -q`', () => {
    const r = spawnSync(composeBin, ['config', '-q'], { cwd: composeDir, encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });
});

describe('rendered manifests (helm, or the Go-template renderer when Debian\'s Go and sprig are installed)', () => {
  const { helm, renderer, helmRun, render } = chartRendering();
  const run = renderer ? it : it.skip;
  const schemas = renderer && hasK8sModels() ? it : it.skip;

  schemas.each([...fixtures.map((f) => [f, ['-f', join(fixturesDir, f)]] as const),
    ['values-production.yaml over inline-secrets.yaml', ['-f', join(fixturesDir, 'inline-secrets.yaml'), '-f', join(chartDir, 'values-production.yaml')]] as const,
    ['every optional feature (NATS Secret, migration roles, ServiceMonitors, adminBootstrap)', ['-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'nats.existingSecret=n',
      '--set', 'nats.credsKey=c', '--set', 'postgresql.identity.migration.runtimeRole=r', '--set', 'postgresql.audit.migration.runtimeRole=a',
      '--set', 'metrics.serviceMonitor.enabled=true']] as const,
    ['operability (secret files, Reloader, HTTPRoute, PrometheusRule, restricted egress, own ServiceAccounts)', ['-f', join(fixturesDir, 'inline-secrets.yaml'), '-f', join(fixturesDir, 'layers', 'operability.yaml')]] as const,
    ['operability over existing Secrets and gRPC TLS', ['-f', join(fixturesDir, 'grpc-tls.yaml'), '-f', join(fixturesDir, 'layers', 'operability.yaml')]] as const,
    ['gRPC mutual TLS from cert-manager (a Certificate per component)', ['-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'grpcTls.certManager.issuerRef.name=iam-grpc-ca',
      '--set', 'grpcTls.certManager.duration=2160h', '--set', 'grpcTls.certManager.renewBefore=720h']] as const,
  ])('every manifest rendered with %s is valid against the Kubernetes API types, unknown fields failing', (_name, args) => {
    const docs = render(...args);
    expect(docs.length).toBeGreaterThan(20);
    expect(k8sTypeErrors(docs)).toBe('');
  });

  schemas('the Kubernetes type check does fail an unknown field, a wrong type and a wrong apiVersion', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--show-only', 'templates/deployment.yaml');
    const [a, b, c] = [structuredClone(docs[0]!), structuredClone(docs[1]!), structuredClone(docs[2]!)];
    ((podSpec(a).containers as JsonObject[])[0]!).imagePullPolcy = 'Always';
    (b.spec as JsonObject).replicas = 'two';
    c.apiVersion = 'apps/v1beta1';
    const errors = k8sTypeErrors([a, b, c]);
    expect(errors.split('\n')).toEqual([
      expect.stringMatching(/^Deployment\/r-iam-gateway: TS2353: .*imagePullPolcy.* does not exist in type 'IContainer'/),
      expect.stringMatching(/^Deployment\/r-iam-identity: TS2322: Type 'string' is not assignable to type 'number'/),
      expect.stringMatching(/^Deployment\/r-iam-directory: TS2322: .*apps\/v1beta1.*apps\/v1/),
    ]);
  });
  const validValues = ['-f', join(fixturesDir, 'inline-secrets.yaml')];

  run.each(fixtures)('lints (helm only) and renders with %s', (name) => {
    if (helm) {
      const lint = helmRun('lint', '--strict', 'iam', '-f', join(fixturesDir, name));
      expect({ status: lint.status, out: lint.stdout + lint.stderr }).toMatchObject({ status: 0 });
    }
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
      const tlsEnv = Object.fromEntries(env.filter((e) => str(e.name).startsWith('GRPC_TLS_') && e.name !== 'GRPC_TLS_PEER_NAMES').map((e) => [e.name, e.value]));
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

  run('per-call balancing: a headless Service per gRPC service, clients dial it by dns:///', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'));
    for (const [svc, port] of [['identity', 50051], ['directory', 50052], ['notification', 50053], ['commerce', 50054], ['audit', 50055]] as const) {
      const headless = named(docs, 'Service', `r-iam-${svc}-headless`);
      expect(headless.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: false, ports: [{ name: 'grpc', port, targetPort: 'grpc' }] });
    }
    const gatewayEnv = (podSpec(named(docs, 'Deployment', 'r-iam-gateway')).containers as JsonObject[])[0]!.env as JsonObject[];
    const value = (n: string) => gatewayEnv.find((e) => e.name === n)?.value;
    expect(value('IDENTITY_GRPC_TARGET')).toBe('dns:///r-iam-identity-headless.iam.svc.cluster.local:50051');
    expect(value('DIRECTORY_GRPC_TARGET')).toBe('dns:///r-iam-directory-headless.iam.svc.cluster.local:50052');
    expect(value('AUDIT_GRPC_TARGET')).toBe('dns:///r-iam-audit-headless.iam.svc.cluster.local:50055');
    expect(value('GATEWAY_OPS_PORT')).toBe('9464');
  });

  run('commerce, audit and notification dial the directory (current rights): their DIRECTORY_GRPC_TARGET, and the directory admits them', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'));
    const target = 'dns:///r-iam-directory-headless.iam.svc.cluster.local:50052';
    for (const svc of ['identity', 'commerce', 'audit', 'notification']) {
      const env = (podSpec(named(docs, 'Deployment', `r-iam-${svc}`)).containers as JsonObject[])[0]!.env as JsonObject[];
      expect([svc, env.find((e) => e.name === 'DIRECTORY_GRPC_TARGET')?.value]).toEqual([svc, target]);
    }
    const grpcFrom = ((named(docs, 'NetworkPolicy', 'r-iam-directory').spec as JsonObject).ingress as JsonObject[]).find((r) => (r.ports as JsonObject[])[0]!.port === 'grpc')!;
    const components = (grpcFrom.from as JsonObject[]).map((f) => ((f.podSelector as JsonObject).matchLabels as JsonObject)['app.kubernetes.io/component']);
    expect([...components].sort()).toEqual(['audit', 'commerce', 'gateway', 'identity', 'notification']);
    // Without the chart's directory, validateValues asks where it is.
    const without = helmRun('template', 'r', 'iam', '--namespace', 'iam', '-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'directory.enabled=false');
    expect(without.stderr).toContain('commerce dials directory, which is disabled');
    expect(without.stderr).toContain('audit dials directory, which is disabled');
  });

  run('migrations: a pre-install/pre-upgrade Job per service with the migration role; the hook Secret holds inline URLs', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'postgresql.identity.migration.runtimeRole=iam_identity');
    expect(docs.filter((d) => d.kind === 'Job' && str((d.metadata as JsonObject).name).endsWith('-migrate')).map((d) => (d.metadata as JsonObject).name))
      .toEqual(SERVICES.map((svc) => `r-iam-${svc}-migrate`));
    for (const svc of SERVICES) {
      const job = named(docs, 'Job', `r-iam-${svc}-migrate`);
      expect((job.metadata as JsonObject).annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade' });
      const container = (podSpec(job).containers as JsonObject[])[0]!;
      expect(container.args).toEqual(['node', `services/${svc}/dist/main.js`, 'migrate']);
      const url = (container.env as JsonObject[]).find((e) => e.name === `${svc.toUpperCase()}_DATABASE_URL`)!;
      expect(url.valueFrom).toEqual({ secretKeyRef: { name: 'r-iam-migrations', key: `${svc}-migration-url` } });
      expect(podSpec(job).serviceAccountName).toBeUndefined();
    }
    const identityJob = (podSpec(named(docs, 'Job', 'r-iam-identity-migrate')).containers as JsonObject[])[0]!;
    expect(identityJob.env).toContainEqual({ name: 'IDENTITY_DATABASE_RUNTIME_ROLE', value: 'iam_identity' });
    expect((named(docs, 'Secret', 'r-iam-migrations').metadata as JsonObject).annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-weight': '-10' });
    // An existing Secret for the migration role: no hook Secret needed for that service.
    const existing = render('-f', join(fixturesDir, 'existing-secrets.yaml'), '--set', 'postgresql.directory.migration.existingSecret=db-owner');
    const dirUrl = ((podSpec(named(existing, 'Job', 'r-iam-directory-migrate')).containers as JsonObject[])[0]!.env as JsonObject[])[0]!;
    expect(dirUrl.valueFrom).toEqual({ secretKeyRef: { name: 'db-owner', key: 'directory-migration-database-url' } });
  });

  run('audit: its migration Job grants the runtime role and writes the retention, its pods get both ports and the retention, one replica recreated, gRPC from the gateway only', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'postgresql.audit.migration.runtimeRole=iam_audit',
      '--set', 'audit.env.AUDIT_RETENTION_DAYS=90');
    // The migrate step: the owner's URL, the runtime role it narrows, the retention it writes into the database.
    const job = (podSpec(named(docs, 'Job', 'r-iam-audit-migrate')).containers as JsonObject[])[0]!;
    expect(job.args).toEqual(['node', 'services/audit/dist/main.js', 'migrate']);
    expect(job.env).toEqual([
      { name: 'AUDIT_DATABASE_URL', valueFrom: { secretKeyRef: { name: 'r-iam-migrations', key: 'audit-migration-url' } } },
      { name: 'AUDIT_DATABASE_RUNTIME_ROLE', value: 'iam_audit' },
      { name: 'AUDIT_RETENTION_DAYS', value: '90' },
      { name: 'LOG_LEVEL', value: 'debug' },
    ]);
    expect(named(docs, 'Secret', 'r-iam-migrations').data).toHaveProperty('audit-migration-url');
    // Only audit's Job gets the retention.
    for (const svc of SERVICES.filter((x) => x !== 'audit')) {
      const env = (podSpec(named(docs, 'Job', `r-iam-${svc}-migrate`)).containers as JsonObject[])[0]!.env as JsonObject[];
      expect([svc, env.map((e) => e.name).filter((n) => str(n).startsWith('AUDIT_'))]).toEqual([svc, []]);
    }
    // The Deployment: one recording and one standing by, ports and retention, its database URL from the chart's Secret.
    const deployment = named(docs, 'Deployment', 'r-iam-audit');
    expect(deployment.spec).toMatchObject({ replicas: 2, strategy: { type: 'RollingUpdate' } });
    const container = (podSpec(deployment).containers as JsonObject[])[0]!;
    expect(container.args).toEqual(['node', 'services/audit/dist/main.js']);
    expect(container.ports).toEqual([
      { name: 'grpc', containerPort: 50055, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    expect(container.env).toEqual(expect.arrayContaining([
      { name: 'AUDIT_GRPC_PORT', value: '50055' },
      { name: 'AUDIT_METRICS_PORT', value: '9464' },
      { name: 'AUDIT_RETENTION_DAYS', value: '90' },
      { name: 'NATS_URL', value: 'nats://nats.messaging.svc:4222' },
      { name: 'AUDIT_DATABASE_URL', valueFrom: { secretKeyRef: { name: 'r-iam', key: 'audit-database-url' } } },
    ]));
    expect(named(docs, 'Secret', 'r-iam').data).toHaveProperty('audit-database-url');
    // The checkpoint signing key: a secret of audit's alone, never in its migration Job (which only migrates).
    expect(container.env).toEqual(expect.arrayContaining([
      { name: 'AUDIT_CHECKPOINT_SIGNING_KEY', valueFrom: { secretKeyRef: { name: 'r-iam', key: 'audit-checkpoint-signing-key' } } },
      { name: 'AUDIT_CHECKPOINT_EVERY', value: '1000' },
      { name: 'AUDIT_CHECKPOINT_INTERVAL_MS', value: '60000' },
    ]));
    expect(named(docs, 'Secret', 'r-iam').data).toHaveProperty('audit-checkpoint-signing-key');
    expect(job.env).not.toContainEqual(expect.objectContaining({ name: 'AUDIT_CHECKPOINT_SIGNING_KEY' }));
    for (const d of docs.filter((x) => x.kind === 'Deployment' && x !== deployment)) {
      const env = (podSpec(d).containers as JsonObject[])[0]!.env as JsonObject[];
      expect([(d.metadata as JsonObject).name, env.some((e) => e.name === 'AUDIT_CHECKPOINT_SIGNING_KEY')]).toEqual([(d.metadata as JsonObject).name, false]);
    }
    // No other component reads audit's database.
    for (const d of docs.filter((x) => x.kind === 'Deployment' && x !== deployment)) {
      const env = (podSpec(d).containers as JsonObject[])[0]!.env as JsonObject[];
      expect([(d.metadata as JsonObject).name, env.some((e) => e.name === 'AUDIT_DATABASE_URL')]).toEqual([(d.metadata as JsonObject).name, false]);
    }
    expect(named(docs, 'Service', 'r-iam-audit').spec).toMatchObject({ ports: [{ name: 'grpc', port: 50055 }, { name: 'metrics', port: 9464 }] });
    // Like every service: a PodDisruptionBudget, a ServiceMonitor on the ops port, no HPA by default.
    expect(named(docs, 'PodDisruptionBudget', 'r-iam-audit').spec).toMatchObject({ maxUnavailable: 1 });
    expect(named(docs, 'ServiceMonitor', 'r-iam-audit').spec).toMatchObject({ endpoints: [{ port: 'metrics', path: '/metrics' }] });
    expect(docs.some((d) => d.kind === 'HorizontalPodAutoscaler' && (d.metadata as JsonObject).name === 'r-iam-audit')).toBe(false);
    // Its gRPC port admits the gateway only; its ops port the monitoring namespace and what networkPolicy.metricsIngressFrom names.
    const selector = (component: string) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'iam', 'app.kubernetes.io/instance': 'r', 'app.kubernetes.io/component': component } } });
    expect((named(docs, 'NetworkPolicy', 'r-iam-audit').spec as JsonObject).ingress).toEqual([
      { ports: [{ port: 'grpc' }], from: [selector('gateway')] },
      { ports: [{ port: 'metrics' }], from: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus-agent' } } },
      ] },
    ]);
    // From existing Secrets: the runtime URL's Secret, and the Job's when no migration role is given.
    const existing = render('-f', join(fixturesDir, 'existing-secrets.yaml'));
    const ref = { valueFrom: { secretKeyRef: { name: 'iam-db', key: 'audit' } } };
    expect((podSpec(named(existing, 'Deployment', 'r-iam-audit')).containers as JsonObject[])[0]!.env).toEqual(expect.arrayContaining([
      { name: 'AUDIT_DATABASE_URL', ...ref },
      { name: 'AUDIT_CHECKPOINT_SIGNING_KEY', valueFrom: { secretKeyRef: { name: 'iam-keys', key: 'audit-checkpoint-signing-key' } } },
    ]));
    expect((podSpec(named(existing, 'Job', 'r-iam-audit-migrate')).containers as JsonObject[])[0]!.env).toEqual([
      { name: 'AUDIT_DATABASE_URL', ...ref },
      { name: 'AUDIT_RETENTION_DAYS', value: '365' },
      { name: 'LOG_LEVEL', value: 'info' },
    ]);
  });

  // helm template does not render NOTES.txt; the Go renderer does (--show-only templates/NOTES.txt).
  const notesRun = renderer && !helm ? it : it.skip;
  notesRun('the install notes show the audit trail (audit.read), its retention, and warn about a second audit pod', () => {
    const notes = (...args: string[]) => {
      const r = helmRun('template', 'r', 'iam', '--namespace', 'iam', '-f', join(fixturesDir, 'inline-secrets.yaml'), '--show-only', 'templates/NOTES.txt', ...args);
      expect(r.stderr).toBe('');
      return r.stdout;
    };
    const text = notes();
    expect(text).toContain('audit: 2 replica(s)');
    expect(text).toContain('6. The audit trail (full profile; needs the audit.read permission, which Administrators have)');
    expect(text).toContain('$IAM_URL/api/v1/audit-events?pageSize=20');
    expect(text).toContain('$IAM_URL/api/v1/audit-events/verify');
    expect(text).toContain('Entries are kept 365 days');
    expect(text).not.toContain('audit runs more than one pod');
    expect(notes('--set', 'audit.env.AUDIT_RETENTION_DAYS=30')).toContain('Entries are kept 30 days');
    // More audit pods are safe (its consumers keep each stream's order): no warning.
    expect(notes('--set', 'audit.replicaCount=3')).not.toContain('audit runs more than one pod');
    expect(notes('--set', 'audit.enabled=false')).not.toContain('/api/v1/audit-events');
    // The admin Job creates only, unless told to reset; the ops ports' namespace is named.
    expect(text).toContain('creates admin@example.com when it does not exist;\n  an existing account keeps its password');
    expect(notes('--set', 'adminBootstrap.resetPassword=true')).toContain('resets that account\'s password to the configured one');
    expect(text).toContain('The ops ports (health, /metrics) admit only the namespaces networkPolicy.monitoringNamespaceSelector selects');
  });

  run('public surface, placement and rollouts: ingress paths, probes on the ops port, soft anti-affinity, zone spread, checksums', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'));
    const paths = (d: JsonObject) => (((d.spec as JsonObject).rules as JsonObject[])[0]!.http as JsonObject).paths as JsonObject[];
    const ingress = named(docs, 'Ingress', 'r-iam-gateway');
    const publicPaths = ['/api', '/.well-known', '/oidc', '/console', '/account', '/reset-password', '/verify-email', '/health', '/healthz'];
    expect(paths(ingress).map((p) => p.path)).toEqual([...publicPaths, '/docs']);
    const production = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '-f', join(chartDir, 'values-production.yaml'));
    expect(paths(named(production, 'Ingress', 'r-iam-gateway')).map((p) => p.path)).toEqual(publicPaths);
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const spec = podSpec(d);
      const container = (spec.containers as JsonObject[])[0]!;
      expect((container.readinessProbe as JsonObject).httpGet).toMatchObject({ path: '/health/ready', port: 'metrics' });
      expect(spec.affinity).toMatchObject({ podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100 }] } });
      expect(spec.topologySpreadConstraints).toMatchObject([{ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }]);
      const annotations = ((d.spec as JsonObject).template as JsonObject).metadata as JsonObject;
      expect(Object.keys(annotations.annotations as JsonObject)).toEqual(expect.arrayContaining(['checksum/secret', 'checksum/config', 'checksum/mounts']));
    }
    // A changed variable changes that component's checksum/config (the pods roll).
    const checksum = (ds: JsonObject[]) => ((((named(ds, 'Deployment', 'r-iam-identity').spec as JsonObject).template as JsonObject).metadata as JsonObject).annotations as JsonObject)['checksum/config'];
    expect(checksum(render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'identity.env.JWT_EXPIRY=600'))).not.toBe(checksum(docs));
  });

  run('NATS credentials come from a mounted Secret, never the URL', () => {
    const docs = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'nats.existingSecret=nats-creds', '--set', 'nats.credsKey=iam.creds',
      '--set', 'nats.caKey=ca.crt', '--set', 'nats.streamReplicas=3');
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const spec = podSpec(d);
      const container = (spec.containers as JsonObject[])[0]!;
      expect(container.env).toEqual(expect.arrayContaining([
        { name: 'NATS_CREDS_FILE', value: '/etc/iam/nats/iam.creds' },
        { name: 'NATS_CA_FILE', value: '/etc/iam/nats/ca.crt' },
        { name: 'NATS_STREAM_REPLICAS', value: '3' },
      ]));
      expect(container.volumeMounts).toContainEqual({ name: 'nats-credentials', mountPath: '/etc/iam/nats', readOnly: true });
      expect(spec.volumes).toContainEqual({ name: 'nats-credentials', secret: { secretName: 'nats-creds', defaultMode: 288 } });
    }
  });

  run('derives TRUST_PROXY from trustedProxies (false when empty) unless gateway.env sets it', () => {
    const trustProxy = (...args: string[]) => {
      const r = helmRun('template', 'r', 'iam', '-f', join(fixturesDir, 'existing-secrets.yaml'), '--show-only', 'templates/deployment.yaml', ...args);
      expect(r.stderr).toBe('');
      const gw = parseAllDocuments(r.stdout).map((d) => d.toJS() as JsonObject).find((d) => (d?.metadata as JsonObject)?.name === 'r-iam-gateway')!;
      const container = ((((gw.spec as JsonObject).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0]!;
      return (container.env as JsonObject[]).find((e) => e.name === 'TRUST_PROXY')?.value;
    };
    expect(trustProxy()).toBe('false');
    // An Ingress alone no longer trusts every sender: only the proxies named (an HTTPRoute alone likewise).
    const routed = ['--set', 'publicUrl=https://iam.example.com', '--set', 'trustedProxies={10.0.0.0/8,fd00::/8}'];
    expect(trustProxy(...routed, '--set', 'ingress.enabled=true')).toBe('10.0.0.0/8,fd00::/8');
    expect(trustProxy(...routed, '--set', 'httpRoute.enabled=true', '--set', 'httpRoute.parentRefs[0].name=public')).toBe('10.0.0.0/8,fd00::/8');
    expect(trustProxy(...routed, '--set', 'ingress.enabled=true', '--set', 'gateway.env.TRUST_PROXY=false')).toBe('false');
  });

  run('renders GRAPHQL_INTROSPECTION into the gateway only: authenticated by default, off with values-production.yaml, what gateway.env sets; validateValues refuses another value', () => {
    const introspection = (docs: JsonObject[]) =>
      Object.fromEntries(docs.filter((d) => d.kind === 'Deployment').map((d) => {
        const env = (podSpec(d).containers as JsonObject[])[0]!.env as JsonObject[];
        return [str((d.metadata as JsonObject).name), env.find((e) => e.name === 'GRAPHQL_INTROSPECTION')?.value];
      }));
    const byDefault = introspection(render(...validValues));
    expect(byDefault['r-iam-gateway']).toBe('authenticated');
    expect(Object.entries(byDefault).filter(([name, value]) => name !== 'r-iam-gateway' && value !== undefined)).toEqual([]);
    expect(introspection(render(...validValues, '-f', join(chartDir, 'values-production.yaml')))['r-iam-gateway']).toBe('off');
    expect(introspection(render(...validValues, '--set', 'gateway.env.GRAPHQL_INTROSPECTION=public'))['r-iam-gateway']).toBe('public');
    for (const [flag, shown] of [['--set', 'false'], ['--set-string', 'yes']] as const) {
      const r = helmRun('template', 'r', 'iam', ...validValues, flag, `gateway.env.GRAPHQL_INTROSPECTION=${shown}`);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`GRAPHQL_INTROSPECTION (gateway.env) must be public, authenticated or off, not "${shown}"`);
    }
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
    expect(r.stderr).toContain('AUDIT_DATABASE_URL is required (by audit)');
    expect(r.stderr).toContain('AUDIT_CHECKPOINT_SIGNING_KEY is required (by audit): set auditCheckpoint.signingKey, or auditCheckpoint.existingSecret');
  });

  const operability = ['-f', join(fixturesDir, 'inline-secrets.yaml'), '-f', join(fixturesDir, 'layers', 'operability.yaml')];

  run('ops ports: only the monitoring namespace (its selector configurable), node CIDRs and extra peers reach them, never every pod', () => {
    const rule = (docs: JsonObject[], c: string) =>
      ((named(docs, 'NetworkPolicy', `r-iam-${c}`).spec as JsonObject).ingress as JsonObject[]).find((r) => (r.ports as JsonObject[])[0]!.port === 'metrics')!;
    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const byDefault = render('-f', join(fixturesDir, 'inline-secrets.yaml'), '--set', 'networkPolicy.metricsIngressFrom=null');
    for (const c of COMPONENTS) expect([c, rule(byDefault, c).from]).toEqual([c, [monitoring]]);
    const tuned = render(...operability, '--set', 'networkPolicy.monitoringNamespaceSelector.matchLabels.team=observability',
      '--set', 'networkPolicy.monitoringPodSelector.matchLabels.app=prometheus');
    for (const c of COMPONENTS) {
      expect([c, rule(tuned, c).from]).toEqual([c, [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring', team: 'observability' } }, podSelector: { matchLabels: { app: 'prometheus' } } },
        { ipBlock: { cidr: '10.0.0.0/16' } },
        { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus-agent' } } },
      ]]);
    }
  });

  run('egress: unrestricted by default (allowExternalEgress); otherwise DNS, the upstreams\' gRPC, and each destination its component uses', () => {
    for (const d of render(...validValues).filter((x) => x.kind === 'NetworkPolicy')) {
      expect([nameOf(d), (d.spec as JsonObject).policyTypes, (d.spec as JsonObject).egress]).toEqual([nameOf(d), ['Ingress'], undefined]);
    }
    const docs = render(...operability);
    const egress = (c: string) => {
      const spec = named(docs, 'NetworkPolicy', `r-iam-${c}`).spec as JsonObject;
      expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
      return spec.egress as JsonObject[];
    };
    const tcp = (...ports: number[]) => ports.map((port) => ({ port, protocol: 'TCP' }));
    const dns = { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] };
    const postgres = { ports: tcp(5432), to: [{ ipBlock: { cidr: '10.20.0.0/16' } }] };
    const dials = (...components: string[]) => ({ ports: [{ port: 'grpc' }], to: components.map((c) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'iam', 'app.kubernetes.io/instance': 'r', 'app.kubernetes.io/component': c } } })) });
    const extra = { ports: tcp(443) };
    // The OpenID provider's HTTP port of identity (the gateway proxies /oidc/* to it).
    const oidc = { ports: [{ port: 50061 }], to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'iam', 'app.kubernetes.io/instance': 'r', 'app.kubernetes.io/component': 'identity' } } }] };
    expect(egress('gateway')).toEqual([dns, oidc, dials('identity', 'directory', 'notification', 'commerce', 'audit'), { ports: tcp(4222) }, { ports: tcp(4318) }, { ports: tcp(6379) }, extra]);
    expect(egress('identity')).toEqual([dns, dials('directory'), { ports: tcp(4222) }, { ports: tcp(4318) }, postgres, extra]);
    expect(egress('directory')).toEqual([dns, { ports: tcp(4222) }, { ports: tcp(4318) }, postgres, extra]);
    const publicOnly = [
      { ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'] } },
      { ipBlock: { cidr: '::/0', except: ['fc00::/7', 'fe80::/10', '::1/128'] } },
    ];
    expect(egress('notification')).toEqual([dns, dials('directory'), { ports: tcp(4222) }, { ports: tcp(4318) }, postgres, { ports: tcp(587, 465) }, { ports: tcp(443), to: publicOnly }, extra]);
    expect(egress('audit')).toEqual([dns, dials('directory'), { ports: tcp(4222) }, { ports: tcp(4318) }, postgres, extra]);
  });

  run('a ServiceAccount per component: each Deployment its own, the admin Job directory\'s, the migration Jobs none of them', () => {
    const docs = render(...operability);
    const accounts = docs.filter((d) => d.kind === 'ServiceAccount');
    expect(accounts.map(nameOf).sort()).toEqual(COMPONENTS.map((c) => `r-iam-${c}`).sort());
    expect(accounts.every((a) => a.automountServiceAccountToken === false)).toBe(true);
    expect((named(docs, 'ServiceAccount', 'r-iam-identity').metadata as JsonObject).annotations).toEqual({ 'iam.gke.io/gcp-service-account': 'identity@project.iam.gserviceaccount.com' });
    expect((named(docs, 'ServiceAccount', 'r-iam-directory').metadata as JsonObject).annotations).toBeUndefined();
    for (const c of COMPONENTS) expect([c, podSpec(named(docs, 'Deployment', `r-iam-${c}`)).serviceAccountName]).toEqual([c, `r-iam-${c}`]);
    expect(podSpec(named(docs, 'Job', 'r-iam-create-admin')).serviceAccountName).toBe('r-iam-directory');
    for (const svc of SERVICES) expect(podSpec(named(docs, 'Job', `r-iam-${svc}-migrate`)).serviceAccountName).toBeUndefined();
    // A component's own (existing) account is used and not created; without create, serviceAccount.name for the rest.
    const own = render(...validValues, '--set', 'commerce.serviceAccount.name=shop', '--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=iam-shared');
    expect(own.filter((d) => d.kind === 'ServiceAccount')).toEqual([]);
    expect(podSpec(named(own, 'Deployment', 'r-iam-commerce')).serviceAccountName).toBe('shop');
    expect(podSpec(named(own, 'Deployment', 'r-iam-gateway')).serviceAccountName).toBe('iam-shared');
    expect(podSpec(named(own, 'Job', 'r-iam-identity-migrate')).serviceAccountName).toBe('iam-shared');
  });

  run('hooks: deadlines within Helm\'s 5-minute hook timeout; the inline migration Secret is deleted once the hooks succeeded; the admin Job creates only, unless resetPassword', () => {
    const docs = render(...validValues);
    for (const j of docs.filter((d) => d.kind === 'Job')) {
      expect([nameOf(j), ((j.spec as JsonObject).activeDeadlineSeconds as number) < 300]).toEqual([nameOf(j), true]);
    }
    expect((named(docs, 'Secret', 'r-iam-migrations').metadata as JsonObject).annotations).toMatchObject({ 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    expect(containerOf(named(docs, 'Job', 'r-iam-create-admin')).args).toEqual(['node', 'services/directory/dist/main.js', '--create-admin', '--if-missing']);
    const reset = render(...validValues, '--set', 'adminBootstrap.resetPassword=true');
    expect(containerOf(named(reset, 'Job', 'r-iam-create-admin')).args).toEqual(['node', 'services/directory/dist/main.js', '--create-admin']);
  });

  run('REDIS_URL and the OTLP headers are secrets: inline or an existingSecret, never plain env', () => {
    const inline = render(...validValues, '--set', 'redis.url=redis://:pw@redis:6379/0', '--set', 'otel.headers=api-key=abc');
    expect(named(inline, 'Secret', 'r-iam').data).toMatchObject({ 'redis-url': Buffer.from('redis://:pw@redis:6379/0').toString('base64'), 'otlp-headers': Buffer.from('api-key=abc').toString('base64') });
    const existing = render('-f', join(fixturesDir, 'existing-secrets.yaml'), '--set', 'redis.existingSecret=iam-redis', '--set', 'redis.existingSecretKey=url',
      '--set', 'otel.existingSecret=iam-otel');
    for (const d of existing.filter((x) => x.kind === 'Deployment')) {
      const env = envOf(d);
      expect([nameOf(d), env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_HEADERS')]).toEqual([nameOf(d), { name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'iam-otel', key: 'otlp-headers' } } }]);
      const redis = env.find((e) => e.name === 'REDIS_URL');
      expect([nameOf(d), redis]).toEqual([nameOf(d), nameOf(d) === 'r-iam-gateway' ? { name: 'REDIS_URL', valueFrom: { secretKeyRef: { name: 'iam-redis', key: 'url' } } } : undefined]);
    }
  });

  run('usePasswordFiles: no secret in any env; each is a file in a read-only volume and the process gets X_FILE', () => {
    const docs = render(...operability);
    const secretFiles: Record<string, string[]> = {};
    for (const d of docs.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
      const env = envOf(d);
      expect([nameOf(d), env.filter((e) => e.valueFrom !== undefined)]).toEqual([nameOf(d), []]);
      const files = env.filter((e) => str(e.value ?? '').startsWith('/etc/iam/secrets/'));
      for (const f of files) expect(f.value).toBe(`/etc/iam/secrets/${str(f.name).replace(/_FILE$/, '')}`);
      secretFiles[nameOf(d)] = files.map((f) => str(f.name)).sort();
      expect(containerOf(d).volumeMounts).toContainEqual({ name: 'secret-files', mountPath: '/etc/iam/secrets', readOnly: true });
      const volume = (podSpec(d).volumes as JsonObject[]).find((v) => v.name === 'secret-files')!;
      const paths = volume.projected
        ? ((volume.projected as JsonObject).sources as { secret: { items: { path: string }[] } }[]).flatMap((s) => s.secret.items.map((i) => i.path))
        : ((volume.secret as JsonObject).items as { path: string }[]).map((i) => i.path);
      expect(paths.map((p) => `${p}_FILE`).sort()).toEqual(secretFiles[nameOf(d)]);
    }
    expect(secretFiles['r-iam-gateway']).toEqual(['INTERNAL_CALL_KEY_FILE', 'OTEL_EXPORTER_OTLP_HEADERS_FILE', 'REDIS_URL_FILE']);
    expect(secretFiles['r-iam-identity']).toEqual(['EMAIL_ACTION_KEY_FILE', 'IDENTITY_DATABASE_URL_FILE', 'INTERNAL_CALL_KEY_FILE', 'JWT_KEY_ENCRYPTION_KEY_FILE', 'OTEL_EXPORTER_OTLP_HEADERS_FILE']);
    expect(secretFiles['r-iam-notification']).toEqual(['EMAIL_ACTION_KEY_FILE', 'INTERNAL_CALL_KEY_FILE', 'NOTIFICATION_DATABASE_URL_FILE', 'OTEL_EXPORTER_OTLP_HEADERS_FILE', 'SMTP_URL_FILE', 'WEBHOOK_SECRET_KEY_FILE']);
    expect(secretFiles['r-iam-create-admin']).toEqual(['ADMIN_PASSWORD_FILE', 'DIRECTORY_DATABASE_URL_FILE', 'OTEL_EXPORTER_OTLP_HEADERS_FILE']);
    expect(secretFiles['r-iam-audit-migrate']).toEqual(['AUDIT_DATABASE_URL_FILE']);
    // Turning it on rolls the pods (the mounts changed).
    const mounts = (ds: JsonObject[]) => ((((named(ds, 'Deployment', 'r-iam-identity').spec as JsonObject).template as JsonObject).metadata as JsonObject).annotations as JsonObject)['checksum/mounts'];
    expect(mounts(docs)).not.toBe(mounts(render(...operability, '--set', 'usePasswordFiles=false')));
  });

  run('reloader.enabled: each Deployment names the Secrets it reads that the chart does not manage, for Stakater Reloader', () => {
    const reload = (docs: JsonObject[]) => Object.fromEntries(docs.filter((d) => d.kind === 'Deployment').map((d) => [nameOf(d), ((d.metadata as JsonObject).annotations as JsonObject | undefined)?.['secret.reloader.stakater.com/reload']]));
    expect(reload(render('-f', join(fixturesDir, 'grpc-tls.yaml'), '--set', 'reloader.enabled=true', '--set', 'nats.existingSecret=iam-nats', '--set', 'nats.credsKey=c'))).toEqual({
      'r-iam-gateway': 'iam-internal-call,iam-nats,iam-gateway-grpc-tls,iam-grpc-ca',
      'r-iam-identity': 'iam-db,iam-keys,iam-internal-call,iam-nats,iam-identity-grpc-tls,iam-grpc-ca',
      'r-iam-directory': 'iam-db,iam-internal-call,iam-nats,iam-directory-grpc-tls,iam-grpc-ca',
      'r-iam-notification': 'iam-db,iam-keys,iam-internal-call,iam-smtp,iam-nats,iam-notification-grpc-tls,iam-grpc-ca',
      'r-iam-commerce': 'iam-db,iam-internal-call,iam-nats,iam-commerce-grpc-tls,iam-grpc-ca',
      'r-iam-audit': 'iam-db,iam-internal-call,iam-nats,iam-audit-grpc-tls,iam-grpc-ca',
    });
    expect(Object.values(reload(render('-f', join(fixturesDir, 'grpc-tls.yaml')))).every((v) => v === undefined)).toBe(true);
  });

  run('PrometheusRule: the prescribed alerts, on the platform\'s own metrics and the standard exporters\', thresholds from values', () => {
    const docs = render(...operability, '--set', 'identity.env.JWT_KEY_ROTATION_HOURS=168', '--set', 'metrics.prometheusRule.outboxAgeSeconds=120');
    const rule = named(docs, 'PrometheusRule', 'r-iam');
    const rules = (((rule.spec as JsonObject).groups as JsonObject[])[0]!.rules as JsonObject[]);
    const byName = Object.fromEntries(rules.map((r) => [str(r.alert), r]));
    expect(Object.keys(byName)).toEqual(['IamOutboxBacklog', 'IamWebhookQueueBehind', 'IamNatsDisconnected', 'IamAuditConsumerLag', 'IamGatewayErrors', 'IamRateLimitsFailOpen', 'IamDpopProofsRefused', 'IamGatewayLatency',
      'IamCertificateExpiry', 'IamSigningKeyNotRotated', 'IamSignInFailures', 'IamRefreshTokenReuse', 'IamMailGivenUp', 'IamTestRule']);
    // identity's security counters and mail given up (issue #44 item 8).
    expect(str(byName.IamSignInFailures!.expr)).toBe('sum by (namespace) (rate(identity_sign_ins_total{namespace="iam",job="identity",outcome=~"failed|refused_locked"}[5m])) > 1');
    expect(str(byName.IamRefreshTokenReuse!.expr)).toBe('sum by (namespace, source) (increase(identity_refresh_token_reuse_total{namespace="iam",job="identity"}[10m])) > 0');
    expect(str(byName.IamMailGivenUp!.expr)).toContain('increase(work_dead_lettered_total{namespace="iam",job=~"identity|notification"}[1h])) > 0');
    // Redis failing: the rate limits fail open, DPoP proofs fail closed (SECURITY.md).
    expect(str(byName.IamRateLimitsFailOpen!.expr)).toBe('sum by (namespace) (rate(rate_limit_store_errors_total{namespace="iam",job="gateway"}[5m])) > 0');
    expect(str(byName.IamDpopProofsRefused!.expr)).toBe('sum by (namespace) (rate(dpop_replay_store_errors_total{namespace="iam",job="gateway"}[5m])) > 0');
    expect(str(byName.IamOutboxBacklog!.expr)).toBe('max by (namespace, job) (outbox_oldest_pending_age_seconds{namespace="iam",job=~"directory|identity|notification|commerce|audit"}) > 120');
    expect(str(byName.IamNatsDisconnected!.expr)).toContain('nats_connected{namespace="iam",job=~"gateway|identity|directory|notification|commerce|audit"}) == 0');
    expect(str(byName.IamAuditConsumerLag!.expr)).toBe('max by (namespace, consumer) (events_consumer_backlog{namespace="iam",job="audit",consumer=~"audit-(directory|identity|commerce|notification)"}) > 1000');
    expect(str(byName.IamWebhookQueueBehind!.expr)).toBe('max by (namespace) (webhook_queue_age_seconds{namespace="iam",job="notification"}) > 120');
    expect(str(byName.IamGatewayErrors!.expr)).toContain('http_server_request_duration_seconds_count{namespace="iam",job="gateway",status_code=~"5.."}');
    expect(str(byName.IamGatewayLatency!.expr)).toMatch(/^histogram_quantile\(0\.99, .*http_server_request_duration_seconds_bucket\{namespace="iam",job="gateway"\}.* > 1$/);
    expect(str(byName.IamCertificateExpiry!.expr)).toContain('certmanager_certificate_expiration_timestamp_seconds{namespace="iam"}');
    expect(str(byName.IamSigningKeyNotRotated!.expr)).toBe(`max by (namespace) (jwt_signing_key_age_seconds{namespace="iam",job="identity"}) > ${(168 + 24) * 3600}`);
    for (const r of rules.slice(0, -1)) {
      expect([r.alert, (r.labels as JsonObject).team, ['warning', 'critical'].includes(str((r.labels as JsonObject).severity))]).toEqual([r.alert, 'iam', true]);
      // Balanced parentheses and braces: a typo in a template shows here rather than in Prometheus.
      const e = str(r.expr);
      for (const [open, close] of [['(', ')'], ['{', '}'], ['[', ']']] as const) expect([r.alert, e.split(open).length]).toEqual([r.alert, e.split(close).length]);
    }
    // Every metric of the platform's own an alert reads is one the code exports.
    const sources = ['packages/platform/src/metrics.ts', 'services/identity/src/infra/key-metrics.ts', 'services/identity/src/infra/security-metrics.ts'].map((f) => read(repoRoot, f)).join('\n');
    for (const metric of ['outbox_oldest_pending_age_seconds', 'nats_connected', 'http_server_request_duration_seconds', 'jwt_signing_key_age_seconds', 'rate_limit_store_errors_total', 'dpop_replay_store_errors_total',
      'identity_sign_ins_total', 'identity_refresh_token_reuse_total', 'work_dead_lettered_total', 'events_consumed_total']) {
      expect([metric, sources.includes(`'${metric}'`) || sources.includes(`}${metric}\``)]).toEqual([metric, true]);
    }
    // Components turned off take their alerts with them; a custom selector replaces the namespace.
    const fewer = render(...operability, '--set', 'audit.enabled=false', '--set-string', 'gateway.env.AUDIT_GRPC_TARGET=audit.elsewhere:50055',
      '--set-string', 'metrics.prometheusRule.selector=cluster="eu1"\\,namespace="iam"');
    const names = (((named(fewer, 'PrometheusRule', 'r-iam').spec as JsonObject).groups as JsonObject[])[0]!.rules as JsonObject[]).map((r) => r.alert);
    expect(names).not.toContain('IamAuditConsumerLag');
    expect(JSON.stringify(named(fewer, 'PrometheusRule', 'r-iam'))).toContain('nats_connected{cluster=\\"eu1\\",namespace=\\"iam\\",job=~');
  });

  run('HTTPRoute and extra paths: the Gateway API route has the Ingress\'s public paths, extra ones included, to the gateway Service', () => {
    const docs = render(...operability);
    const ingressPaths = ((((named(docs, 'Ingress', 'r-iam-gateway').spec as JsonObject).rules as JsonObject[])[0]!.http as JsonObject).paths as JsonObject[]).map((p) => `${str(p.pathType)} ${str(p.path)}`);
    // routing.test.ts holds these against the gateway's route table.
    expect(ingressPaths).toEqual(['Prefix /api', 'Prefix /.well-known', 'Prefix /oidc', 'Prefix /console', 'Exact /account', 'Exact /reset-password', 'Exact /verify-email',
      'Exact /health', 'Exact /healthz', 'Prefix /docs', 'Prefix /oauth2']);
    const route = named(docs, 'HTTPRoute', 'r-iam-gateway').spec as JsonObject;
    expect(route.parentRefs).toEqual([{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }]);
    expect(route.hostnames).toEqual(['iam.example.com']);
    const [only] = route.rules as JsonObject[];
    expect((only!.matches as JsonObject[]).map((m) => `${str((m.path as JsonObject).type).replace('PathPrefix', 'Prefix')} ${str((m.path as JsonObject).value)}`)).toEqual(ingressPaths);
    expect(only!.backendRefs).toEqual([{ name: 'r-iam-gateway', port: 80 }]);
    expect(render(...validValues).some((d) => d.kind === 'HTTPRoute')).toBe(false);
  });

  run.each<[string, string[], string]>([
    ['an unknown gateway profile', ['--set-string', 'gateway.env.GATEWAY_PROFILES=full\\,bogus'], 'unknown profile "bogus"'],
    ['a disabled upstream', ['--set', 'identity.enabled=false'], 'gateway dials identity, which is disabled'],
    ['a secret in plain env', ['--set', 'config.SMTP_URL=smtp://x'], 'SMTP_URL is a secret'],
    ['a malformed key', ['--set', 'jwt.keyEncryptionKey=short'], 'base64 of exactly 32 bytes'],
    ['a malformed checkpoint signing key', ['--set', 'auditCheckpoint.signingKey=short'], 'auditCheckpoint.signingKey must be the base64 of exactly 32 bytes'],
    ['a checkpoint key file next to the key Secret', ['--set', 'audit.env.AUDIT_CHECKPOINT_SIGNING_KEY_FILE=/etc/x/k'], 'audit.env.AUDIT_CHECKPOINT_SIGNING_KEY_FILE and auditCheckpoint.signingKey'],
    ['a grace period shorter than the shutdown', ['--set', 'config.SHUTDOWN_TIMEOUT_MS=60000'], 'terminationGracePeriodSeconds must exceed'],
    ['gRPC TLS without Secrets', ['--set', 'grpcTls.enabled=true'], 'grpcTls.enabled needs grpcTls.existingSecrets.gateway'],
    ['a gRPC TLS certificate without its key', ['--set', 'identity.env.GRPC_TLS_CERT_FILE=/etc/x/tls.crt'], 'GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE go together'],
    ['a key file next to the key Secret', ['--set', 'identity.env.JWT_KEY_ENCRYPTION_KEY_FILE=/etc/x/k'], 'are both set'],
    ['an audit retention of no days', ['--set', 'audit.env.AUDIT_RETENTION_DAYS=0'], 'AUDIT_RETENTION_DAYS (audit.env) must be a whole number of days from 1 to 36500, not "0"'],
    ['an audit retention that is not a number', ['--set-string', 'audit.env.AUDIT_RETENTION_DAYS=1y'], 'must be a whole number of days from 1 to 36500, not "1y"'],
    ['a disabled audit service the gateway dials', ['--set', 'audit.enabled=false'], 'gateway dials audit, which is disabled: enable audit or set AUDIT_GRPC_TARGET in gateway.env'],
    ['gRPC TLS without audit\'s Secret', ['-f', join(fixturesDir, 'grpc-tls.yaml'), '--set', 'grpcTls.existingSecrets.audit='], 'grpcTls.enabled needs grpcTls.existingSecrets.audit'],
    ['an SMTP URL of another scheme', ['--set', 'smtp.url=http://mail.example.com'], 'smtp.url must be an smtp:// or smtps:// URL'],
    ['a relative action base URL', ['--set', 'email.actionBaseUrl=app.example.com'], 'must be an http:// or https:// URL'],
    ['production values without a runtime role', ['-f', join(chartDir, 'values-production.yaml'), '--set', 'postgresql.commerce.migration.runtimeRole='],
      'postgresql.commerce.migration.runtimeRole is required (migrations.requireRuntimeRole)'],
    ['REDIS_URL in plain env', ['--set', 'gateway.env.REDIS_URL=redis://:pw@redis:6379'], 'REDIS_URL is a secret and must not be set in config or gateway.env: set redis.url or its existingSecret'],
    ['the OTLP headers in plain env', ['--set', 'config.OTEL_EXPORTER_OTLP_HEADERS=api-key=x'], 'OTEL_EXPORTER_OTLP_HEADERS is a secret'],
    ['a secret file of a component\'s own next to the Secret', ['--set', 'notification.env.SMTP_URL_FILE=/etc/x/smtp'], 'notification.env.SMTP_URL_FILE and smtp.url (or smtp.existingSecret) are both set'],
    ['an ops path routed from outside', ['-f', valuesFile('ingress:\n  extraPaths: [/oauth2, /metrics]\n')], 'ingress.extraPaths: /metrics is the ops port\'s'],
    ['an HTTPRoute without a Gateway', ['--set', 'httpRoute.enabled=true'], 'httpRoute.enabled needs httpRoute.parentRefs'],
  ])('validateValues rejects %s', (_what, args, message) => {
    const r = helmRun('template', 'r', 'iam', ...validValues, ...args);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});

/**
 * Structural checks of the Helm chart (helm/iam) and the compose file, runnable without helm:
 * Chart.yaml fields, values.yaml against values.schema.json, every value documented, template
 * blocks balanced, every named template defined, every static .Values path present, the
 * process paths pointing at real entry points, and every variable the chart or the compose file
 * sets being one the application reads; with /usr/bin/docker-compose it runs
 * `docker-compose config -q`. The chart rendered (helm lint with a helm binary, the manifests,
 * validateValues): chart-rendered.test.ts and chart-operability.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { isMap, isSeq, parse, parseDocument, visit } from 'yaml';
import { type Json, type JsonObject, chartDir, isObject, repoRoot } from './manifests';
import { COMPONENTS, fixture, fixtures, read, values, withValues } from './chart-values';

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

const schema = JSON.parse(read(chartDir, 'values.schema.json')) as Schema;
const templateFiles = readdirSync(templatesDir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
const templates = new Map(templateFiles.map((f) => [f, read(templatesDir, f)]));

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

/**
 * The chart rendered (helm, or the Go-template renderer of render/): the manifests against the
 * Kubernetes API types, the components' pods, Services, migration Jobs, the audit service and the
 * install notes. Operability options and validateValues: chart-operability.test.ts.
 */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  type JsonObject, chartDir, chartRendering, fixturesDir, hasK8sModels, isObject, k8sTypeErrors, named, podSpec, str,
} from './manifests';
import { COMPONENTS, SERVICES, fixture, fixtures, withValues } from './chart-values';

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
    const publicPaths = ['/api', '/.well-known', '/oidc', '/scim', '/console', '/account', '/reset-password', '/verify-email', '/health', '/healthz'];
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
});

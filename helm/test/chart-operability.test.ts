/**
 * The chart's operability options rendered (ops ports, egress, ServiceAccounts, hooks, secret
 * files, Reloader, PrometheusRule, HTTPRoute) and validateValues' refusals.
 */
import { join } from 'node:path';
import {
  type JsonObject, chartDir, chartRendering, containerOf, envOf, fixturesDir, nameOf, named, podSpec, repoRoot, str,
} from './manifests';
import { COMPONENTS, SERVICES, read, valuesFile } from './chart-values';

describe('rendered manifests: operability and validateValues', () => {
  const { renderer, helmRun, render } = chartRendering();
  const run = renderer ? it : it.skip;
  const validValues = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
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
    // The bulk import enrols TOTP factors at identity.
    expect(egress('directory')).toEqual([dns, dials('identity'), { ports: tcp(4222) }, { ports: tcp(4318) }, postgres, extra]);
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

/**
 * The chart's side of "gRPC callers prove who they are" (issue #22), rendered with helm or
 * render/: every component gets the INTERNAL_CALL_KEY its call assertions are signed with and no
 * hook Job does; one value (grpcTls.certManager.issuerRef.name) turns gRPC mutual TLS on with a
 * cert-manager Certificate per component, named as its clients dial it; and a service's gRPC port
 * admits exactly the components its methods answer (services/<service>/src/api/grpc.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type JsonObject, chartDir, chartRendering, containerOf, envOf, fixturesDir, nameOf, named, podSpec, repoRoot, str,
} from './manifests';

const COMPONENTS = ['gateway', 'identity', 'directory', 'notification', 'commerce', 'audit'];
const SERVICES = COMPONENTS.filter((c) => c !== 'gateway');
const inline = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
const KEY = 'dGVzdC1vbmx5LWludGVybmFsLWNhbGwta2V5LTAwMDA=';

const { renderer, helmRun, render } = chartRendering();
const run = renderer ? it : it.skip;
const ofKind = (docs: JsonObject[], kind: string) => docs.filter((d) => d.kind === kind);
const componentOf = (d: JsonObject) => str(((d.metadata as JsonObject).labels as JsonObject)['app.kubernetes.io/component']);
/** The env entries of a pod whose name starts with `prefix`. */
const envNamed = (d: JsonObject, prefix: string) => envOf(d).filter((e) => str(e.name).startsWith(prefix));
const secretVolumePaths = (d: JsonObject): string[] => {
  const volume = ((podSpec(d).volumes ?? []) as JsonObject[]).find((v) => v.name === 'secret-files');
  if (!volume) return [];
  const sources = volume.projected ? ((volume.projected as JsonObject).sources as { secret: { items: { path: string }[] } }[]) : [{ secret: volume.secret as { items: { path: string }[] } }];
  return sources.flatMap((s) => s.secret.items.map((i) => i.path));
};
const refused = (...args: string[]): string => {
  const r = helmRun('template', 'r', 'iam', '--namespace', 'iam', ...args);
  expect(r.status).not.toBe(0);
  return r.stderr;
};

describe('INTERNAL_CALL_KEY: the gateway and every service, never a hook Job', () => {
  run('inline: each Deployment reads it from the chart\'s Secret; the migration and admin Jobs do not get it', () => {
    const docs = render(...inline);
    expect(ofKind(docs, 'Deployment').map(componentOf).sort()).toEqual([...COMPONENTS].sort());
    for (const d of ofKind(docs, 'Deployment')) {
      expect([nameOf(d), envNamed(d, 'INTERNAL_CALL_KEY')]).toEqual([nameOf(d), [{ name: 'INTERNAL_CALL_KEY', valueFrom: { secretKeyRef: { name: 'r-iam', key: 'internal-call-key' } } }]]);
    }
    expect(named(docs, 'Secret', 'r-iam').data).toMatchObject({ 'internal-call-key': Buffer.from(KEY).toString('base64') });
    const jobs = ofKind(docs, 'Job');
    expect(jobs.map(nameOf)).toEqual(expect.arrayContaining(['r-iam-create-admin', ...SERVICES.map((s) => `r-iam-${s}-migrate`)]));
    for (const j of jobs) expect([nameOf(j), envNamed(j, 'INTERNAL_CALL_KEY')]).toEqual([nameOf(j), []]);
    // A new key rolls every component (checksum/secret).
    const checksums = (ds: JsonObject[]) => ofKind(ds, 'Deployment').map((d) => (((d.spec as JsonObject).template as JsonObject).metadata as JsonObject).annotations as JsonObject).map((a) => a['checksum/secret']);
    const other = checksums(render(...inline, '--set', `internalCall.key=${Buffer.alloc(32, 7).toString('base64')}`));
    checksums(docs).forEach((c, i) => expect(other[i]).not.toBe(c));
  });

  run('existingSecret: from that Secret and key, named for Reloader; values-production.yaml expects the Secret iam-internal-call', () => {
    const docs = render('-f', join(fixturesDir, 'existing-secrets.yaml'), '--set', 'internalCall.existingSecretKey=call', '--set', 'reloader.enabled=true');
    for (const d of ofKind(docs, 'Deployment')) {
      expect(envNamed(d, 'INTERNAL_CALL_KEY')).toEqual([{ name: 'INTERNAL_CALL_KEY', valueFrom: { secretKeyRef: { name: 'iam-keys', key: 'call' } } }]);
      expect(str(((d.metadata as JsonObject).annotations as JsonObject)['secret.reloader.stakater.com/reload']).split(',')).toContain('iam-keys');
    }
    const production = render(...inline, '-f', join(chartDir, 'values-production.yaml'));
    for (const d of ofKind(production, 'Deployment')) {
      expect(envNamed(d, 'INTERNAL_CALL_KEY')).toEqual([{ name: 'INTERNAL_CALL_KEY', valueFrom: { secretKeyRef: { name: 'iam-internal-call', key: 'internal-call-key' } } }]);
    }
    expect(named(production, 'Secret', 'r-iam').data).not.toHaveProperty('internal-call-key');
  });

  run('usePasswordFiles: INTERNAL_CALL_KEY_FILE in every component, the key a file of its secret volume; not in the Jobs', () => {
    const docs = render(...inline, '-f', join(fixturesDir, 'layers', 'operability.yaml'));
    for (const d of ofKind(docs, 'Deployment')) {
      expect(envNamed(d, 'INTERNAL_CALL_KEY')).toEqual([{ name: 'INTERNAL_CALL_KEY_FILE', value: '/etc/iam/secrets/INTERNAL_CALL_KEY' }]);
      expect(secretVolumePaths(d)).toContain('INTERNAL_CALL_KEY');
    }
    for (const j of ofKind(docs, 'Job')) {
      expect([nameOf(j), envNamed(j, 'INTERNAL_CALL_KEY'), secretVolumePaths(j).includes('INTERNAL_CALL_KEY')]).toEqual([nameOf(j), [], false]);
    }
  });

  run('a file of each component\'s own replaces it (INTERNAL_CALL_KEY_FILE in env)', () => {
    const own = COMPONENTS.flatMap((c) => ['--set-string', `${c}.env.INTERNAL_CALL_KEY_FILE=/etc/iam/call/key`]);
    const docs = render(...inline, '--set', 'internalCall.key=', ...own);
    for (const d of ofKind(docs, 'Deployment')) expect(envNamed(d, 'INTERNAL_CALL_KEY')).toEqual([{ name: 'INTERNAL_CALL_KEY_FILE', value: '/etc/iam/call/key' }]);
  });

  run.each<[string, string[], string]>([
    ['no key', ['--set', 'internalCall.key='],
      'INTERNAL_CALL_KEY is required (by gateway, identity, directory, notification, commerce, audit): set internalCall.key, or internalCall.existingSecret (key internalCall.existingSecretKey)'],
    ['no key where only identity reads a file of its own', ['--set', 'internalCall.key=', '--set-string', 'identity.env.INTERNAL_CALL_KEY_FILE=/k'],
      'INTERNAL_CALL_KEY is required (by gateway, directory, notification, commerce, audit)'],
    ['a key that is not base64 of 32 bytes', ['--set', 'internalCall.key=c2hvcnQ='], 'internalCall.key must be the base64 of exactly 32 bytes'],
    ['the key in plain env', ['--set-string', `config.INTERNAL_CALL_KEY=${KEY}`], 'INTERNAL_CALL_KEY is a secret and must not be set in config or gateway.env: set internalCall.key or its existingSecret'],
    ['a file of a component\'s own next to the Secret', ['--set-string', 'commerce.env.INTERNAL_CALL_KEY_FILE=/k'],
      'commerce.env.INTERNAL_CALL_KEY_FILE and internalCall.key (or internalCall.existingSecret) are both set'],
  ])('validateValues refuses %s', (_what, args, message) => {
    expect(refused(...inline, ...args)).toContain(message);
  });
});

describe('gRPC mutual TLS from cert-manager: one value', () => {
  const certManager = [...inline, '--set', 'grpcTls.certManager.issuerRef.name=iam-grpc-ca', '--set', 'grpcTls.certManager.issuerRef.kind=ClusterIssuer'];

  run('a Certificate per component from the issuer, its SANs exactly the name its clients dial, serving both ways; each Deployment mounts its Secret', () => {
    const docs = render(...certManager);
    const certs = ofKind(docs, 'Certificate');
    expect(certs.map(nameOf).sort()).toEqual(COMPONENTS.map((c) => `r-iam-${c}-grpc`).sort());
    // The names the clients dial: the host of every *_GRPC_TARGET the chart gives a component.
    const dialled: Record<string, Set<string>> = {};
    for (const d of ofKind(docs, 'Deployment')) {
      for (const e of envNamed(d, '').filter((x) => str(x.name).endsWith('_GRPC_TARGET'))) {
        const target = str(e.name).replace(/_GRPC_TARGET$/, '').toLowerCase();
        (dialled[target] ??= new Set()).add(/^dns:\/\/\/([^:]+):\d+$/.exec(str(e.value))![1]!);
      }
    }
    expect(Object.keys(dialled).sort()).toEqual([...SERVICES].sort());
    for (const cert of certs) {
      const component = componentOf(cert);
      const spec = cert.spec as JsonObject;
      expect(cert.apiVersion).toBe('cert-manager.io/v1');
      expect(spec).toMatchObject({
        secretName: `r-iam-${component}-grpc-tls`,
        issuerRef: { name: 'iam-grpc-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
        privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
        secretTemplate: { labels: { 'app.kubernetes.io/instance': 'r', 'app.kubernetes.io/component': component } },
      });
      expect(spec.usages).toEqual(expect.arrayContaining(['server auth', 'client auth']));
      expect([component, spec.dnsNames]).toEqual([component, component === 'gateway' ? ['r-iam-gateway.iam.svc.cluster.local'] : [...dialled[component]!]]);
      expect(spec).not.toHaveProperty('duration');
    }
    // Every service checks that a caller's certificate is the one the chart requested for the component it asserts to be.
    const sans = Object.fromEntries(certs.map((c) => [componentOf(c), ((c.spec as JsonObject).dnsNames as string[])[0]!]));
    const peerNames = COMPONENTS.map((c) => `${c}=${sans[c]}`).sort().join(',');
    for (const d of ofKind(docs, 'Deployment')) {
      const dir = '/etc/iam/tls';
      const peers = componentOf(d) === 'gateway' ? {} : { GRPC_TLS_PEER_NAMES: peerNames };
      const env = Object.fromEntries(envNamed(d, 'GRPC_TLS_').map((e) => [e.name, e.name === 'GRPC_TLS_PEER_NAMES' ? str(e.value).split(',').sort().join(',') : e.value]));
      expect(env).toEqual({ GRPC_TLS_CERT_FILE: `${dir}/tls.crt`, GRPC_TLS_KEY_FILE: `${dir}/tls.key`, GRPC_TLS_CA_FILE: `${dir}/ca.crt`, ...peers });
      expect(containerOf(d).volumeMounts).toContainEqual({ name: 'grpc-tls', mountPath: dir, readOnly: true });
      const volume = (podSpec(d).volumes as JsonObject[]).find((v) => v.name === 'grpc-tls')!;
      expect((volume.projected as JsonObject).sources).toEqual([{ secret: { name: `r-iam-${componentOf(d)}-grpc-tls`, items: [
        { key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }, { key: 'ca.crt', path: 'ca.crt' },
      ] } }]);
    }
    for (const j of ofKind(docs, 'Job')) expect([nameOf(j), envNamed(j, 'GRPC_TLS_')]).toEqual([nameOf(j), []]);
    // Off without an issuer (grpcTls.enabled stays false in both).
    const plain = render(...inline);
    expect(ofKind(plain, 'Certificate')).toEqual([]);
    expect(ofKind(plain, 'Deployment').flatMap((d) => envNamed(d, 'GRPC_TLS_'))).toEqual([]);
  });

  run('lifetimes from values; a component\'s own Secret wins (no Certificate for it); a disabled component gets none; Reloader rolls a renewal', () => {
    const docs = render(...certManager, '--set', 'grpcTls.certManager.duration=2160h', '--set', 'grpcTls.certManager.renewBefore=720h',
      '--set', 'grpcTls.existingSecrets.gateway=own-gateway-tls', '--set', 'notification.enabled=false',
      '--set-string', 'gateway.env.NOTIFICATION_GRPC_TARGET=notification.elsewhere:50053', '--set', 'reloader.enabled=true');
    expect(ofKind(docs, 'Certificate').map(nameOf).sort()).toEqual(['r-iam-audit-grpc', 'r-iam-commerce-grpc', 'r-iam-directory-grpc', 'r-iam-identity-grpc']);
    expect(named(docs, 'Certificate', 'r-iam-identity-grpc').spec).toMatchObject({ duration: '2160h', renewBefore: '720h' });
    const tlsSecret = (c: string) => ((((podSpec(named(docs, 'Deployment', `r-iam-${c}`)).volumes as JsonObject[]).find((v) => v.name === 'grpc-tls')!.projected as JsonObject).sources as JsonObject[])[0]!.secret as JsonObject).name;
    expect(tlsSecret('gateway')).toBe('own-gateway-tls');
    expect(tlsSecret('directory')).toBe('r-iam-directory-grpc-tls');
    const reload = (c: string) => str(((named(docs, 'Deployment', `r-iam-${c}`).metadata as JsonObject).annotations as JsonObject)['secret.reloader.stakater.com/reload']).split(',');
    expect(reload('directory')).toContain('r-iam-directory-grpc-tls');
    expect(reload('gateway')).toContain('own-gateway-tls');
    // The gateway's own Secret: its name is not the chart's to know, so no service checks peers...
    expect(envNamed(named(docs, 'Deployment', 'r-iam-directory'), 'GRPC_TLS_PEER_NAMES')).toEqual([]);
    // ...until grpcTls.peerNames names it.
    const named2 = render(...certManager, '--set', 'grpcTls.existingSecrets.gateway=own-gateway-tls', '--set', 'grpcTls.peerNames.gateway=edge.example.internal');
    expect(str(envNamed(named(named2, 'Deployment', 'r-iam-directory'), 'GRPC_TLS_PEER_NAMES')[0]!.value)).toContain('gateway=edge.example.internal');
  });

  run('grpcTls.enabled without Secrets or an issuer is refused, naming both ways', () => {
    expect(refused(...inline, '--set', 'grpcTls.enabled=true')).toContain(
      'grpcTls.enabled needs grpcTls.existingSecrets.gateway: a Secret with tls.crt, tls.key and ca.crt; or grpcTls.certManager.issuerRef.name');
  });
});

describe('NetworkPolicy: a service\'s gRPC port admits exactly the components its methods answer', () => {
  /** The components named in a service's caller lists (bindService's `callers`, and the lists it reuses). */
  const callersInCode = (svc: string): string[] => {
    const source = readFileSync(join(repoRoot, 'services', svc, 'src', 'api', 'grpc.ts'), 'utf8');
    const names = [...source.matchAll(/\[\s*'[a-z]+'(?:\s*,\s*'[a-z]+')*\s*\]/g)].flatMap((m) => [...m[0].matchAll(/'([a-z]+)'/g)].map((x) => x[1]!));
    return [...new Set(names.filter((n) => COMPONENTS.includes(n)))].sort();
  };

  it('reads the callers from the services\' sources', () => {
    expect(callersInCode('directory')).toEqual(['audit', 'commerce', 'gateway', 'identity', 'notification']);
    expect(callersInCode('notification')).toEqual(['gateway']);
  });

  run.each(SERVICES)('%s: the components its NetworkPolicy admits and the ones the chart points at it are its callers', (svc) => {
    const docs = render(...inline);
    const grpc = ((named(docs, 'NetworkPolicy', `r-iam-${svc}`).spec as JsonObject).ingress as JsonObject[]).find((r) => (r.ports as JsonObject[])[0]!.port === 'grpc')!;
    const admitted = (grpc.from as JsonObject[]).map((f) => ((f.podSelector as JsonObject).matchLabels as JsonObject)['app.kubernetes.io/component']);
    expect([...admitted].sort()).toEqual(callersInCode(svc));
    const dialers = ofKind(docs, 'Deployment').filter((d) => envNamed(d, `${svc.toUpperCase()}_GRPC_TARGET`).length > 0).map(componentOf);
    expect(dialers.sort()).toEqual(callersInCode(svc));
  });
});

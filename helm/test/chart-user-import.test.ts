/**
 * The user import Job (issue #39, userImport): off by default; on, a post-install/post-upgrade hook
 * running `directory --import` on the file of a Secret, with directory's environment and gRPC
 * identity (it enrols the file's TOTP factors at identity, whose NetworkPolicy then admits it).
 */
import { join } from 'node:path';
import {
  type JsonObject, chartRendering, containerOf, envOf, fixturesDir, hasK8sModels, k8sTypeErrors, nameOf, named, podSpec, str,
} from './manifests';

const { renderer, helmRun, render } = chartRendering();
const run = renderer ? it : it.skip;
const schemas = renderer && hasK8sModels() ? it : it.skip;
const inline = ['-f', join(fixturesDir, 'inline-secrets.yaml')];
const enabled = [...inline, '--set', 'userImport.enabled=true', '--set', 'userImport.existingSecret=iam-users'];
const JOB = 'r-iam-import-users';
const envNames = (d: JsonObject) => envOf(d).map((e) => str(e.name));
/** The components whose pods identity's gRPC port admits. */
const identityGrpcFrom = (docs: JsonObject[]) =>
  (((named(docs, 'NetworkPolicy', 'r-iam-identity').spec as JsonObject).ingress as JsonObject[]).find((r) => (r.ports as JsonObject[])[0]!.port === 'grpc')!.from as JsonObject[])
    .map((f) => str(((f.podSelector as JsonObject).matchLabels as JsonObject)['app.kubernetes.io/component']));

describe('userImport: the --import Job', () => {
  run('off by default: no Job, identity admits the gateway and the directory only', () => {
    const docs = render(...inline);
    expect(docs.filter((d) => d.kind === 'Job').map(nameOf)).not.toContain(JOB);
    expect(identityGrpcFrom(docs).sort()).toEqual(['directory', 'gateway']);
  });

  run('on without a Secret: refused, naming the value', () => {
    const r = helmRun('template', 'r', 'iam', '--namespace', 'iam', ...inline, '--set', 'userImport.enabled=true');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('userImport.enabled needs userImport.existingSecret');
  });

  run('on: a hook after the admin Job, the file from the Secret, directory\'s environment and ServiceAccount; identity admits its pods', () => {
    const docs = render(...enabled);
    const job = named(docs, 'Job', JOB);
    expect((job.metadata as JsonObject).annotations).toMatchObject({ 'helm.sh/hook': 'post-install,post-upgrade', 'helm.sh/hook-weight': '1', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    expect((job.spec as JsonObject).activeDeadlineSeconds).toBeLessThan(300);
    expect(containerOf(job).args).toEqual(['node', 'services/directory/dist/main.js', '--import', '/import/users.ndjson', '--format', 'ndjson']);
    const spec = podSpec(job);
    expect(spec.serviceAccountName).toBe('r-iam-directory');
    expect((spec.volumes as JsonObject[]).find((v) => v.name === 'import-file')).toEqual({ name: 'import-file', secret: { secretName: 'iam-users', defaultMode: 288, items: [{ key: 'users.ndjson', path: 'users.ndjson' }] } });
    expect(containerOf(job).volumeMounts).toEqual(expect.arrayContaining([{ name: 'import-file', mountPath: '/import', readOnly: true }]));
    // It calls identity as the directory does.
    expect(envNames(job)).toEqual(expect.arrayContaining(['DIRECTORY_DATABASE_URL', 'IDENTITY_GRPC_TARGET', 'INTERNAL_CALL_KEY']));
    expect(envOf(job).find((e) => e.name === 'IDENTITY_GRPC_TARGET')).toEqual(envOf(named(docs, 'Deployment', 'r-iam-directory')).find((e) => e.name === 'IDENTITY_GRPC_TARGET'));
    expect(identityGrpcFrom(docs).sort()).toEqual(['directory', 'gateway', 'user-import']);
    // A JSON array file: --format json by its key, unless userImport.format says otherwise.
    const json = render(...enabled, '--set', 'userImport.existingSecretKey=export.json');
    expect(containerOf(named(json, 'Job', JOB)).args).toEqual(['node', 'services/directory/dist/main.js', '--import', '/import/export.json', '--format', 'json']);
  });

  run('with gRPC mutual TLS: directory\'s certificate, as its pods present it', () => {
    const docs = render(...enabled, '--set', 'grpcTls.certManager.issuerRef.name=iam-grpc-ca');
    const job = named(docs, 'Job', JOB);
    const tls = (podSpec(job).volumes as JsonObject[]).find((v) => v.name === 'grpc-tls')!;
    expect(((tls.projected as JsonObject).sources as JsonObject[])[0]).toMatchObject({ secret: { name: 'r-iam-directory-grpc-tls' } });
    expect(envNames(job)).toEqual(expect.arrayContaining(['GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE', 'GRPC_TLS_CA_FILE']));
  });

  schemas('valid against the Kubernetes API types (secret files, restricted egress, gRPC TLS)', () => {
    const docs = render(...enabled, '-f', join(fixturesDir, 'layers', 'operability.yaml'), '--set', 'grpcTls.certManager.issuerRef.name=iam-grpc-ca');
    expect(k8sTypeErrors(docs.filter((d) => d.kind === 'Job' || d.kind === 'NetworkPolicy'))).toBe('');
    expect(envNames(named(docs, 'Job', JOB))).toEqual(expect.arrayContaining(['INTERNAL_CALL_KEY_FILE', 'DIRECTORY_DATABASE_URL_FILE']));
  });
});

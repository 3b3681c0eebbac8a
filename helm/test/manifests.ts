/**
 * What the chart's render tests share (chart-rendered.test.ts, chart-operability.test.ts, grpc-callers.test.ts): rendering the chart
 * with helm or render/ (renderer.ts), reading the manifests, and checking them against the
 * Kubernetes API types of k8s/ (`cd helm/test/k8s && npm ci`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { goRenderer, helmBinary } from './renderer';

export const repoRoot = resolve(__dirname, '..', '..');
export const chartDir = join(repoRoot, 'helm', 'iam');
export const fixturesDir = join(repoRoot, 'helm', 'test', 'values');
export const k8sDir = join(repoRoot, 'helm', 'test', 'k8s');

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A string field of a rendered manifest; anything else fails the test. */
export const str = (v: Json | undefined): string => {
  if (typeof v !== 'string') throw new Error(`expected a string, got ${JSON.stringify(v)}`);
  return v;
};

/**
 * The chart rendered like `helm template r iam --namespace iam`: with a helm binary, or else the
 * Go-template renderer when Debian's Go and sprig are installed; `renderer` undefined when neither.
 */
export function chartRendering() {
  const helm = helmBinary();
  const renderer = helm ?? goRenderer();
  const helmRun = (...args: string[]) =>
    spawnSync(args[0] === 'lint' ? helm! : renderer!, args, { cwd: join(repoRoot, 'helm'), encoding: 'utf8', timeout: 60_000 });
  /** The manifests; rendering must print nothing on stderr. */
  const render = (...args: string[]): JsonObject[] => {
    const r = helmRun('template', 'r', 'iam', '--namespace', 'iam', ...args);
    expect(r.stderr).toBe('');
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as JsonObject | null).filter(isObject);
  };
  return { helm, renderer, helmRun, render };
}

export const named = (docs: JsonObject[], kind: string, name: string): JsonObject => {
  const d = docs.find((x) => x.kind === kind && (x.metadata as JsonObject).name === name);
  if (!d) throw new Error(`no ${kind}/${name}`);
  return d;
};
export const podSpec = (d: JsonObject): JsonObject => ((d.spec as JsonObject).template as JsonObject).spec as JsonObject;
export const containerOf = (d: JsonObject) => (podSpec(d).containers as JsonObject[])[0]!;
export const envOf = (d: JsonObject) => containerOf(d).env as JsonObject[];
export const nameOf = (d: JsonObject) => str((d.metadata as JsonObject).name);

/** Whether the Kubernetes API types are installed (k8sTypeErrors can run). */
export const hasK8sModels = (): boolean => existsSync(join(k8sDir, 'node_modules', 'kubernetes-models'));

/** The Kubernetes API types of k8s/, by kind. */
const MODELS: Record<string, [string, string]> = {
  Deployment: ['kubernetes-models/apps/v1/Deployment', 'IDeployment'],
  Service: ['kubernetes-models/v1/Service', 'IService'],
  Secret: ['kubernetes-models/v1/Secret', 'ISecret'],
  ServiceAccount: ['kubernetes-models/v1/ServiceAccount', 'IServiceAccount'],
  Job: ['kubernetes-models/batch/v1/Job', 'IJob'],
  Ingress: ['kubernetes-models/networking.k8s.io/v1/Ingress', 'IIngress'],
  NetworkPolicy: ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'INetworkPolicy'],
  PodDisruptionBudget: ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
  HorizontalPodAutoscaler: ['kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler', 'IHorizontalPodAutoscaler'],
  ServiceMonitor: ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor', 'IServiceMonitor'],
  PrometheusRule: ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule', 'IPrometheusRule'],
  HTTPRoute: ['@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute', 'IHTTPRoute'],
  Certificate: ['@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate', 'ICertificate'],
};

/**
 * Checks manifests against the Kubernetes API types of kubernetes-models, strictly: each becomes
 * an object literal typed with its kind's interface, so TypeScript's excess-property check fails
 * an unknown field anywhere, as well as a wrong type, a missing required field or a wrong
 * apiVersion. Returns the compiler's complaints ('' when none).
 */
export function k8sTypeErrors(docs: JsonObject[]): string {
  const work = mkdtempSync(join(k8sDir, 'node_modules', '.check-'));
  try {
    const kinds = [...new Set(docs.map((d) => str(d.kind)))];
    const unknown = kinds.filter((k) => !MODELS[k]);
    if (unknown.length > 0) return `no Kubernetes model for kind(s) ${unknown.join(', ')}`;
    const source = [
      ...kinds.map((k) => `import type { ${MODELS[k]![1]} } from '${MODELS[k]![0]}';`),
      ...docs.map((d, i) => `// ${str(d.kind)}/${str((d.metadata as JsonObject).name)}\nexport const m${i}: ${MODELS[str(d.kind)]![1]} = ${JSON.stringify(d, null, 1)};`),
    ].join('\n');
    writeFileSync(join(work, 'manifests.ts'), source);
    writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true, types: [] },
      files: ['manifests.ts'],
    }));
    const tsc = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(work, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
    if (tsc.status === 0) return '';
    // Name the manifest each complaint is about (the comment line above its literal).
    const lines = source.split('\n');
    return (tsc.stdout + tsc.stderr).split('\n').filter(Boolean).map((l) => {
      const at = /manifests\.ts\((\d+),/.exec(l);
      if (!at) return l;
      let n = Number(at[1]) - 1;
      while (n > 0 && !lines[n]!.startsWith('// ')) n--;
      return `${lines[n]!.slice(3)}: ${l.replace(/^.*?error /, '')}`;
    }).join('\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

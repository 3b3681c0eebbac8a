/**
 * What the chart's tests read (chart.test.ts, chart-rendered.test.ts, chart-operability.test.ts):
 * the chart's values and schema, the fixtures, the components, and Helm's merge of values.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type Json, type JsonObject, chartDir, fixturesDir, isObject } from './manifests';

export const read = (...p: string[]): string => readFileSync(join(...p), 'utf8');
/** A values file written for one test (values --set cannot express, such as a list). */
export const valuesFile = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'iam-values-')), 'values.yaml');
  writeFileSync(file, text);
  return file;
};

export const values = parse(read(chartDir, 'values.yaml')) as JsonObject;
export const fixtures = readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml'));
/** The processes the chart deploys (iam.components). */
export const COMPONENTS = ['gateway', 'identity', 'directory', 'notification', 'commerce', 'audit'];
/** The services with a database of their own and a migration Job (iam.databaseServices). */
export const SERVICES = ['directory', 'identity', 'notification', 'commerce', 'audit'];

/** Helm's merge of user values over the chart's defaults: maps merge, anything else replaces. */
export function mergeValues(base: Json, over: Json): Json {
  if (!isObject(base) || !isObject(over)) return over;
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeValues(base[k]!, v) : v;
  return out;
}
export const withValues = (over: JsonObject): JsonObject => mergeValues(structuredClone(values), over) as JsonObject;
export const fixture = (name: string): JsonObject => parse(read(fixturesDir, name)) as JsonObject;

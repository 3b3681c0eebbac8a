/**
 * Request validation with Ajv. Bodies are validated strictly (no type coercion, unknown fields
 * rejected rather than stripped); query strings and path parameters may coerce "2" → 2.
 *
 * Every string a request carries (body, query string, path parameters) is plain text: a string
 * schema without a format of its own gets the shared `text` format, which refuses NUL and the
 * other control characters (tab, line feed and carriage return aside) and lone surrogates, so
 * no route can let one through to a database or a log (a NUL in an email was a 500). One place,
 * every route, present and future; formats such as `uuid` and `date-time` refuse them already.
 * The rule itself (isPlainText) is the platform's, shared with the OpenID provider.
 */
import { isPlainText } from '@iam/platform/core';
import Ajv, { type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const base: Options = {
  allErrors: false,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  messages: true,
};

export const TEXT_FORMAT = 'text';

type Schema = Record<string, unknown>;

/** A copy of `schema` whose string schemas without a format have the `text` format. */
export function withTextFormat(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withTextFormat);
  if (typeof schema !== 'object' || schema === null) return schema;
  const s = schema as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions' || k === '$defs') {
      out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, sub]) => [name, withTextFormat(sub)]));
    } else if (['items', 'prefixItems', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'contains'].includes(k)) {
      out[k] = withTextFormat(v);
    } else {
      out[k] = v;
    }
  }
  const isString = s.type === 'string' || (Array.isArray(s.type) && s.type.includes('string'));
  if (isString && s.format === undefined && s.const === undefined && s.enum === undefined) out.format = TEXT_FORMAT;
  return out;
}

export function installValidators(app: FastifyInstance): void {
  const body = new Ajv({ ...base, coerceTypes: false });
  // verbose: an error carries its schema, so an unknown query parameter can be answered with the
  // profile's spelling of it (errors.ts otherSpelling).
  const params = new Ajv({ ...base, coerceTypes: true, verbose: true });
  for (const ajv of [body, params]) {
    addFormats(ajv);
    ajv.addFormat(TEXT_FORMAT, { type: 'string', validate: isPlainText });
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'headers') return compiledOnFirstUse(() => params.compile(schema));
    return compiledOnFirstUse(() => (httpPart === 'body' ? body : params).compile(withTextFormat(schema) as Schema));
  });
}

/**
 * A validator compiled when its route first receives a request, not at start: compiling every
 * route's schemas was most of the gateway's start-up CPU (≈0.8 s of the all-in-one's ≈4 s, issue
 * #43) and kept the code of routes nobody calls in memory. Fastify reads `errors` after a `false`.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

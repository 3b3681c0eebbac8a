/**
 * Request validation with Ajv. Bodies are validated strictly (no type coercion, unknown fields
 * rejected rather than stripped); query strings and path parameters may coerce "2" → 2.
 */
import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const base: Options = {
  allErrors: false,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  messages: true,
};

export function installValidators(app: FastifyInstance): void {
  const body = new Ajv({ ...base, coerceTypes: false });
  const params = new Ajv({ ...base, coerceTypes: true });
  addFormats(body);
  addFormats(params);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema));
}

/**
 * A few JSON Schema (draft 2020-12) builders for the catalog's payload schemas: plain objects, so
 * the contracts package needs no schema library and the README shows them as they are.
 */

export type JsonSchema = Readonly<Record<string, unknown>>;

export const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
export const uuid = (description?: string): JsonSchema => ({ type: 'string', format: 'uuid', ...(description ? { description } : {}) });
export const int = (description?: string): JsonSchema => ({ type: 'integer', ...(description ? { description } : {}) });
export const bool = (description?: string): JsonSchema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const time = (description?: string): JsonSchema => ({ type: 'string', format: 'date-time', ...(description ? { description } : {}) });
export const nullable = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] });
export const arr = (items: JsonSchema, description?: string): JsonSchema => ({ type: 'array', items, ...(description ? { description } : {}) });

/** An object whose every listed property is required, unless named in `optional`. */
export function obj(properties: Record<string, JsonSchema>, optional: readonly string[] = []): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)), additionalProperties: false };
}

/** The audit trail's field change: field, before, after, or redacted (a secret field, never its value). */
export const CHANGES: JsonSchema = arr(
  obj({ field: str(), before: {}, after: {}, redacted: { const: true } }, ['before', 'after', 'redacted']),
  'Each changed field with its value before and after, as the audit trail records it; a secret field only as redacted: true',
);

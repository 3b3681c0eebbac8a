/**
 * Field-level changes as the audit trail states them (services/audit/src/app/describe.ts): each
 * changed field with its value before and after; a secret field only as `redacted`, never with a
 * value; a field whose known value did not change left out. Webhook payloads carry the same list,
 * so a receiver and the trail describe a change the same way.
 */

export interface FieldChange {
  readonly field: string;
  readonly before?: unknown;
  readonly after?: unknown;
  readonly redacted?: true;
}

/** Fields never sent with a value (the audit trail's SECRET_FIELDS). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['password', 'passwordHash', 'token', 'refreshToken', 'sealedToken', 'tokenHash', 'link', 'clientSecret', 'secretHash']);

export type View = Readonly<Record<string, unknown>>;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** before/after of the named fields; secret ones redacted; unchanged known values left out. */
export function changesOf(fields: readonly string[], before: View | undefined, after: View | undefined): FieldChange[] {
  const out: FieldChange[] = [];
  for (const field of fields) {
    if (SECRET_FIELDS.has(field)) {
      out.push({ field, redacted: true });
      continue;
    }
    const b = before?.[field];
    const a = after?.[field];
    if (b !== undefined && a !== undefined && same(a, b)) continue;
    out.push({ field, ...(b !== undefined ? { before: b } : {}), ...(a !== undefined ? { after: a } : {}) });
  }
  return out;
}

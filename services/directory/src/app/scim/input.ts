/**
 * What a SCIM request may carry before anything reads it: JSON at most MAX_DEPTH deep, and no
 * string (a value, a key, a query parameter) with NUL or an unpaired surrogate, which
 * PostgreSQL cannot store in text or jsonb (a 400 `invalidValue`, never a database error).
 * The walk is iterative: a deeply nested body costs no stack.
 */
import { ScimError } from '../../domain/scim-error';

export const MAX_DEPTH = 32;

// eslint-disable-next-line no-control-regex -- NUL is exactly what is refused
const UNSTORABLE = /\u0000|\p{Cs}/u;

const refuse = (what: string) => ScimError.badRequest('invalidValue', `${what} holds NUL or an unpaired surrogate, which cannot be stored.`);

/** Throws a 400 for an unstorable string anywhere in the document, or a document nested too deep. */
export function checkDocument(doc: unknown): void {
  const stack: Array<[unknown, number]> = [[doc, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) throw refuse('A value');
    } else if (typeof v === 'object' && v !== null) {
      if (depth >= MAX_DEPTH) throw ScimError.badRequest('invalidSyntax', `A SCIM document nests at most ${MAX_DEPTH} levels.`);
      for (const [k, child] of Object.entries(v)) {
        if (UNSTORABLE.test(k)) throw refuse('A key');
        stack.push([child, depth + 1]);
      }
    }
  }
}

export function checkQuery(query: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(query)) if (UNSTORABLE.test(k) || UNSTORABLE.test(v)) throw refuse('A query parameter');
}

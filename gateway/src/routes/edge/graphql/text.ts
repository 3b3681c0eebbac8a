/**
 * Strings in a GraphQL request are plain text, as every other request string is
 * (plugins/app/validation.ts): a string literal of the document (an escape such as "\u0000" gets
 * past the lexer) or a string anywhere in its variables with NUL, another control character or an
 * unpaired surrogate is refused with BAD_USER_INPUT before anything runs.
 */
import { type DocumentNode, GraphQLError, Kind, visit } from 'graphql';
import { isPlainText } from '@iam/platform/core';

const refused = (message: string): GraphQLError => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
const MESSAGE = 'must not contain control characters (such as NUL) or unpaired surrogates';

/** The document's string literals that are not plain text, as errors. */
export function documentTextErrors(document: DocumentNode): GraphQLError[] {
  const errors: GraphQLError[] = [];
  visit(document, {
    [Kind.STRING]: (node) => {
      if (!isPlainText(node.value)) errors.push(new GraphQLError(`A string in the query ${MESSAGE}.`, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }));
    },
  });
  return errors;
}

/** The first variable (by path) holding a string that is not plain text, as an error. */
export function variablesTextError(variables: unknown): GraphQLError | undefined {
  const walk = (v: unknown, path: string, depth: number): string | undefined => {
    if (typeof v === 'string') return isPlainText(v) ? undefined : path;
    if (depth > 20 || typeof v !== 'object' || v === null) return undefined;
    for (const [k, x] of Object.entries(v)) {
      const at = walk(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`, depth + 1);
      if (at) return at;
    }
    return undefined;
  };
  const at = walk(variables, '$', 0);
  return at ? refused(`The variable ${at.replace(/^\$\./, '$')} ${MESSAGE}.`) : undefined;
}

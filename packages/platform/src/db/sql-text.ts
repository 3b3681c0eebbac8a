/** Text spliced into SQL where a parameter cannot stand: identifiers, and LIKE patterns' wildcards. */

/** Double-quotes an identifier (a database or role name) for DDL, which takes no parameters. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Escapes `%`, `_` and `\` so user text matches literally inside LIKE / ILIKE. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

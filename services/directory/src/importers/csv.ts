/**
 * A generic CSV (RFC 4180: quoted fields, doubled quotes, CRLF or LF) with a header row naming
 * the import's fields: email, firstName, lastName, phone, externalId, emailVerified (true/false),
 * roles (separated by `;`), passwordChangeRequired, passwordHash; with `hashAlgorithm` (and
 * `salt`, and `param.<name>` columns) the hash is given in parts.
 */
import type { Converted, ImportUserJson } from './types';

/** The rows of a CSV text, fields unquoted. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((f) => f !== ''));
}

const bool = (v: string | undefined) => (v === undefined || v === '' ? undefined : /^(true|1|yes)$/i.test(v));

export function* fromCsv(text: string): Generator<Converted> {
  const [header, ...rows] = parseCsv(text.replace(/^\uFEFF/, ''));
  if (!header?.includes('email')) throw new Error('the CSV header must name an email column');
  for (const [n, cells] of rows.entries()) {
    const get = (name: string) => {
      const i = header.indexOf(name);
      return i === -1 ? undefined : cells[i]?.trim();
    };
    const email = get('email');
    if (!email) {
      yield { skip: `row ${n + 2} has no email` };
      continue;
    }
    const params = Object.fromEntries(header.flatMap((h, i) => (h.startsWith('param.') && cells[i] ? [[h.slice(6), /^\d+$/.test(cells[i]) ? Number(cells[i]) : cells[i]]] : [])));
    const hash = get('passwordHash');
    const algorithm = get('hashAlgorithm');
    const salt = get('salt');
    const user: ImportUserJson = {
      firstName: get('firstName') ?? '',
      lastName: get('lastName') ?? '',
      email,
      ...(get('externalId') ? { externalId: get('externalId')! } : {}),
      ...(bool(get('emailVerified')) !== undefined ? { emailVerified: bool(get('emailVerified'))! } : {}),
      ...(get('phone') ? { phone: Number(get('phone')) } : {}),
      ...(get('roles') ? { roles: get('roles')!.split(';').map((r) => r.trim()).filter(Boolean) } : {}),
      ...(bool(get('passwordChangeRequired')) ? { passwordChangeRequired: true } : {}),
      ...(hash ? { passwordHash: algorithm ? { algorithm, hash, ...(salt ? { salt } : {}), ...(Object.keys(params).length > 0 ? { params } : {}) } : hash } : {}),
    };
    yield { user };
  }
}

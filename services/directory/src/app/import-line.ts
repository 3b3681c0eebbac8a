/**
 * One line of a bulk import: its JSON read and checked by the same rules as POST /users (names,
 * email, phone), plus the import's own fields. A line that does not pass is refused with every
 * reason found, never thrown: the rest of the import goes on.
 */
import { isUuid } from '@iam/platform';
import type { HashInput, ImportedTotp } from '../domain/ports';
import { NAME_MAX_LENGTH, Violations, checkEmail, checkName, checkPhone } from '../domain/rules';

/** Longest line (or JSON array element) read; longer ones are refused unread. */
export const IMPORT_LINE_MAX_BYTES = 64 * 1024;

export interface ImportCandidate {
  readonly id: string | undefined;
  readonly externalId: string | null;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phone: number | null;
  readonly emailVerified: boolean;
  readonly roles: readonly string[];
  readonly passwordChangeRequired: boolean;
  /** A hash as the source stored it, the hook (no hash yet), or none (the user must reset). */
  readonly password: { kind: 'hash'; input: HashInput } | { kind: 'hook' } | { kind: 'none' };
  /** A TOTP factor to enrol once the user exists (identity's ImportTotp); null for none. */
  readonly totp: ImportedTotp | null;
}

export type ParsedLine = { ok: true; user: ImportCandidate } | { ok: false; reason: string };

const FIELDS = new Set(['id', 'externalId', 'firstName', 'lastName', 'email', 'phone', 'emailVerified', 'roles', 'passwordChangeRequired', 'passwordHash', 'passwordMigration', 'totp']);
const TOTP_FIELDS = new Set(['secret', 'algorithm', 'digits', 'period']);
const BASE32 = /^[A-Z2-7]+=*$/i;
const HASH_FIELDS = new Set(['algorithm', 'hash', 'salt', 'params']);
const CONTROL = /\p{Cc}/u;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function hashInput(v: Violations, raw: unknown): HashInput | undefined {
  if (typeof raw === 'string') {
    if (CONTROL.test(raw)) v.add('passwordHash', 'must not contain control characters');
    return raw;
  }
  if (!isObject(raw)) {
    v.add('passwordHash', 'must be a string or {algorithm, hash, salt, params}');
    return undefined;
  }
  const unknown = Object.keys(raw).filter((k) => !HASH_FIELDS.has(k));
  if (unknown.length > 0) v.add('passwordHash', `unknown field(s) ${unknown.join(', ')}`);
  const { algorithm, hash, salt, params } = raw;
  if (typeof algorithm !== 'string' || algorithm.length === 0 || algorithm.length > 40) v.add('passwordHash.algorithm', 'must be a short string');
  if (typeof hash !== 'string' || hash.length === 0 || hash.length > 4096) v.add('passwordHash.hash', 'must be a string of at most 4096 characters');
  if (salt !== undefined && (typeof salt !== 'string' || salt.length > 1024)) v.add('passwordHash.salt', 'must be a string of at most 1024 characters');
  const p: Record<string, string | number> = {};
  if (params !== undefined) {
    if (!isObject(params)) v.add('passwordHash.params', 'must be an object');
    else
      for (const [k, value] of Object.entries(params)) {
        if ((typeof value === 'string' && value.length <= 1024) || (typeof value === 'number' && Number.isFinite(value))) p[k] = value;
        else v.add(`passwordHash.params.${k}`, 'must be a string or a number');
      }
  }
  if (v.problems.length > 0) return undefined;
  return { algorithm: algorithm as string, hash: hash as string, ...(salt === undefined ? {} : { salt: salt as string }), ...(params === undefined ? {} : { params: p }) };
}

/**
 * `totp: {secret, algorithm, digits, period}`: the parameters identity's verifier checks (SHA1, 6
 * digits, 30 s; the defaults when absent) and a base32 secret of 10 to 128 bytes; refused here
 * otherwise, never at sign-in.
 */
function totpInput(v: Violations, raw: unknown): ImportedTotp | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) {
    v.add('totp', 'must be {secret, algorithm, digits, period}');
    return null;
  }
  const unknown = Object.keys(raw).filter((k) => !TOTP_FIELDS.has(k));
  if (unknown.length > 0) v.add('totp', `unknown field(s) ${unknown.map((k) => k.slice(0, 40)).join(', ')}`);
  const { secret, algorithm = 'SHA1', digits = 6, period = 30 } = raw;
  const bytes = typeof secret === 'string' && BASE32.test(secret) ? Math.floor((secret.replace(/=+$/, '').length * 5) / 8) : 0;
  if (bytes < 10 || bytes > 128) v.add('totp.secret', 'must be base32, 10 to 128 bytes');
  if (algorithm !== 'SHA1') v.add('totp.algorithm', 'must be SHA1 (the only one the verifier checks)');
  if (digits !== 6) v.add('totp.digits', 'must be 6');
  if (period !== 30) v.add('totp.period', 'must be 30');
  return { secret: String(secret).toUpperCase(), algorithm: 'SHA1', digits: 6, period: 30 };
}

export function parseImportLine(text: string): ParsedLine {
  if (Buffer.byteLength(text, 'utf8') > IMPORT_LINE_MAX_BYTES) return { ok: false, reason: `longer than ${IMPORT_LINE_MAX_BYTES} bytes` };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  if (!isObject(raw)) return { ok: false, reason: 'must be a JSON object' };
  const v = new Violations();
  const unknown = Object.keys(raw).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) v.add(unknown.map((k) => k.slice(0, 40)).join(', '), 'unknown field');
  const str = (field: string): string => {
    const value = raw[field];
    if (typeof value === 'string') return value;
    v.add(field, 'must be a string');
    return '';
  };
  const bool = (field: string): boolean => {
    const value = raw[field];
    if (value === undefined) return false;
    if (typeof value !== 'boolean') v.add(field, 'must be true or false');
    return value === true;
  };
  const firstName = checkName(v, 'firstName', str('firstName'));
  const lastName = checkName(v, 'lastName', str('lastName'));
  const email = checkEmail(v, 'email', str('email'));
  let phone: number | null = null;
  if (raw.phone !== undefined && raw.phone !== null) {
    if (typeof raw.phone === 'number') phone = checkPhone(v, 'phone', raw.phone);
    else v.add('phone', 'must be a number');
  }
  let id: string | undefined;
  if (raw.id !== undefined) {
    if (typeof raw.id === 'string' && isUuid(raw.id)) id = raw.id.toLowerCase();
    else v.add('id', 'must be a UUID');
  }
  let externalId: string | null = null;
  if (raw.externalId !== undefined && raw.externalId !== null) {
    if (typeof raw.externalId === 'string' && raw.externalId.trim().length > 0 && raw.externalId.length <= 255 && !CONTROL.test(raw.externalId)) externalId = raw.externalId.trim();
    else v.add('externalId', 'must be a string of 1 to 255 characters without control characters');
  }
  let roles: string[] = [];
  if (raw.roles !== undefined) {
    if (Array.isArray(raw.roles) && raw.roles.length <= 100 && raw.roles.every((r): r is string => typeof r === 'string' && r.length > 0 && r.length <= NAME_MAX_LENGTH)) roles = raw.roles;
    else v.add('roles', 'must be a list of at most 100 role names');
  }
  let password: ImportCandidate['password'] = { kind: 'none' };
  if (raw.passwordMigration !== undefined && raw.passwordMigration !== 'hook') v.add('passwordMigration', 'must be "hook"');
  if (raw.passwordMigration === 'hook' && raw.passwordHash !== undefined) v.add('passwordMigration', 'excludes passwordHash (the hook gives the hash at the first sign-in)');
  else if (raw.passwordMigration === 'hook') password = { kind: 'hook' };
  else if (raw.passwordHash !== undefined) {
    const input = hashInput(v, raw.passwordHash);
    if (input !== undefined) password = { kind: 'hash', input };
  }
  const emailVerified = bool('emailVerified');
  const passwordChangeRequired = bool('passwordChangeRequired');
  const totp = totpInput(v, raw.totp);
  if (v.problems.length > 0) return { ok: false, reason: v.problems.map((p) => `${p.field}: ${p.message}`).join('; ') };
  return { ok: true, user: { id, externalId, firstName, lastName, email, phone, emailVerified, roles, passwordChangeRequired, password, totp } };
}

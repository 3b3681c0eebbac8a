/**
 * Input rules the directory enforces, whoever calls it (the gateway checks shapes; these are
 * the domain's own limits). Violations are VALIDATION errors naming the field.
 */
import { AppError, type FieldError } from '@iam/platform';
import type { ListQuery } from './model';

export const PASSWORD_MIN_LENGTH = 12;
/** Longer passwords are refused before hashing (a megabyte password costs nothing to reject). */
export const PASSWORD_MAX_LENGTH = 128;
export const NAME_MAX_LENGTH = 100;
export const DESCRIPTION_MAX_LENGTH = 500;
export const EMAIL_MAX_LENGTH = 254;
export const PHONE_MAX = 999_999_999_999_999; // 15 digits (E.164)
export const Q_MAX_LENGTH = 200;

const EMAIL_RE = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+\.[^\s@"(),:;<>[\]\\]{2,}$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

export class Violations {
  private readonly list: FieldError[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  throwIfAny(detail = 'The request is not valid.'): void {
    if (this.list.length > 0) throw AppError.validation(detail, this.list);
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function checkEmail(v: Violations, field: string, email: string): string {
  const e = normalizeEmail(email);
  if (e.length === 0 || e.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(e) || CONTROL_RE.test(e)) v.add(field, 'must be a valid email address');
  return e;
}

/** Spec §5.7: at least 12 characters with upper- and lower-case letters, a digit and a special character. */
export function passwordProblems(password: string): string[] {
  const problems: string[] = [];
  if ([...password].length < PASSWORD_MIN_LENGTH) problems.push(`must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if ([...password].length > PASSWORD_MAX_LENGTH) problems.push(`must be at most ${PASSWORD_MAX_LENGTH} characters`);
  if (!/\p{Lu}/u.test(password)) problems.push('must contain an uppercase letter');
  if (!/\p{Ll}/u.test(password)) problems.push('must contain a lowercase letter');
  if (!/\p{Nd}/u.test(password)) problems.push('must contain a digit');
  if (!/[^\p{L}\p{Nd}\s]/u.test(password)) problems.push('must contain a special character');
  if (CONTROL_RE.test(password)) problems.push('must not contain control characters');
  return problems;
}

export function checkPassword(v: Violations, field: string, password: string): void {
  const problems = passwordProblems(password);
  if (problems.length > 0) v.add(field, problems.join('; '));
}

/** A display name: trimmed, 1..100 characters, no control characters. */
export function checkName(v: Violations, field: string, value: string, max = NAME_MAX_LENGTH): string {
  const s = value.trim();
  if (s.length === 0) v.add(field, 'must not be empty');
  else if (s.length > max) v.add(field, `must be at most ${max} characters`);
  else if (CONTROL_RE.test(s)) v.add(field, 'must not contain control characters');
  return s;
}

export function checkDescription(v: Violations, field: string, value: string): string {
  const s = value.trim();
  if (s.length > DESCRIPTION_MAX_LENGTH) v.add(field, `must be at most ${DESCRIPTION_MAX_LENGTH} characters`);
  if (/\u0000/.test(s)) v.add(field, 'must not contain NUL characters');
  return s;
}

export function checkPhone(v: Violations, field: string, phone: number): number {
  if (!Number.isSafeInteger(phone) || phone < 0 || phone > PHONE_MAX) v.add(field, 'must be a whole number of at most 15 digits');
  return phone;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** Ids are validated before any query: a malformed one is 400, never a database error. */
export function checkId(id: string, field = 'id'): string {
  if (!isUuid(id)) throw AppError.validation('The id is not a UUID.', [{ field, message: 'must be a UUID' }]);
  return id.toLowerCase();
}

export function checkListQuery(q: { page: number; pageSize: number; q: string; includeDeleted: boolean }): ListQuery {
  const v = new Violations();
  if (!Number.isInteger(q.page) || q.page < 1) v.add('page', 'must be an integer ≥ 1');
  if (!Number.isInteger(q.pageSize) || q.pageSize < 1 || q.pageSize > 100) v.add('pageSize', 'must be an integer from 1 to 100');
  if (q.q.length > Q_MAX_LENGTH) v.add('q', `must be at most ${Q_MAX_LENGTH} characters`);
  if (q.q.includes('\u0000')) v.add('q', 'must not contain NUL characters');
  v.throwIfAny('The paging or search parameters are not valid.');
  const text = q.q.trim();
  return { page: q.page, pageSize: q.pageSize, q: text.length > 0 ? text : undefined, includeDeleted: q.includeDeleted };
}

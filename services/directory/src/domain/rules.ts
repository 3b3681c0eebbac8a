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
/** The page travels as an int32 (ListQuery.page). */
export const PAGE_MAX = 2_147_483_647;

const EMAIL_RE = /^[^\s@"(),:;<>[\]\\]+@[^\s@"(),:;<>[\]\\]+\.[^\s@"(),:;<>[\]\\]{2,}$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
/**
 * What an identifier (email, role or permission name) may not contain, because it is invisible
 * or changes how the text around it is shown: controls (C0, C1), format characters (\p{Cf}:
 * zero-width, bidi controls, soft hyphen, word joiner, BOM, …), every other default-ignorable
 * code point (combining grapheme joiner, Hangul fillers, variation selectors), line and paragraph
 * separators, spaces other than U+0020, private-use and unassigned code points, lone surrogates,
 * the replacement character (what a lone surrogate becomes on its way here) and the blank
 * Braille pattern.
 */
const INVISIBLE_RE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\u2800\ufffd]|(?! )\p{Zs}/u;
/**
 * Bidi controls (which reorder what is shown) and lone surrogates (and U+FFFD, what one becomes
 * on its way here): refused even in person names.
 */
const BIDI_OR_LONE_SURROGATE_RE = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cs}\ufffd]/u;
/** Latin letters, and the letters of the scripts with the most Latin lookalikes (Cyrillic 'а', Greek 'ο', Armenian 'օ'). */
const LATIN_LETTER_RE = /(?=\p{L})\p{Script=Latin}/u;
const LATIN_LOOKALIKE_LETTER_RE = /(?=\p{L})[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}]/u;
/**
 * The letters of those scripts that are drawn like a Latin letter (their UTS #39 confusables
 * mapping is one ASCII letter): a name made of these alone, such as Cyrillic 'АВС' or 'аррӏе', is
 * a whole-script lookalike of a Latin word. Names in those scripts with any other letter
 * ('Администратор', 'пример', 'Διαχειριστής') are ordinary text and stay valid.
 */
const DRAWN_AS_LATIN = new Set([
  ...'АВСЕНІЈКМОРЅТХУҮԚԜӀасеорхуѕіјһԁԛԝӏү', // Cyrillic
  ...'ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοναργυι', // Greek
  ...'ՕՍՏԼօսցհոզա', // Armenian
]);
const LETTERS_RE = /\p{L}/gu;

/** Whether every letter of `part` (it has at least one) is a non-Latin letter drawn like a Latin one. */
function onlyLatinLookalikes(part: string): boolean {
  const letters = part.match(LETTERS_RE);
  return letters !== null && letters.every((l) => DRAWN_AS_LATIN.has(l));
}

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

/**
 * Why an identifier would not be told apart from another one that looks the same, or undefined:
 * invisible characters anywhere (checked before trimming, so a trailing U+FEFF is not silently
 * dropped), compatibility or decomposed forms (the value must be NFKC, as PRECIS IdentifierClass
 * asks: no fullwidth 'Ａ', no 'e' + combining accent beside a precomposed 'é'), and Latin letters
 * mixed with Cyrillic, Greek or Armenian ones within one of `segments` (default: the whole value),
 * or a segment spelled only with letters of those scripts that are drawn like Latin ones (the
 * whole value, not each word: 'Работа с клиентами' is Russian with a one-letter word 'с').
 */
export function identifierProblem(raw: string, segments?: (trimmed: string) => readonly string[]): string | undefined {
  if (INVISIBLE_RE.test(raw)) return 'must not contain invisible, control, formatting, private-use or unassigned characters, or spaces other than U+0020';
  const s = raw.trim();
  if (s.normalize('NFKC') !== s) return 'must be in Unicode normalization form NFKC (no compatibility or decomposed characters)';
  const parts = segments ? segments(s) : [s];
  if (parts.some((part) => LATIN_LETTER_RE.test(part) && LATIN_LOOKALIKE_LETTER_RE.test(part))) {
    return 'must not mix Latin letters with Cyrillic, Greek or Armenian letters';
  }
  if (parts.some(onlyLatinLookalikes)) {
    return 'must not be spelled only with Cyrillic, Greek or Armenian letters that look like Latin ones';
  }
  return undefined;
}

/** The local part and each domain label are checked for mixed scripts on their own (so `иван@example.com` stays valid). */
const emailSegments = (e: string): string[] => {
  const at = e.lastIndexOf('@');
  return at < 0 ? [e] : [e.slice(0, at), ...e.slice(at + 1).split('.')];
};

/** An email address: trimmed and lower-cased, shaped like an address, and a clean identifier (identifierProblem). */
export function checkEmail(v: Violations, field: string, email: string): string {
  const e = normalizeEmail(email);
  if (e.length === 0 || e.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(e) || CONTROL_RE.test(e)) {
    v.add(field, 'must be a valid email address');
    return e;
  }
  const problem = identifierProblem(email.toLowerCase(), emailSegments);
  if (problem) v.add(field, problem);
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

/** A person's name: trimmed, 1..100 characters, no control characters, bidi controls or lone surrogates. */
export function checkName(v: Violations, field: string, value: string, max = NAME_MAX_LENGTH): string {
  const s = value.trim();
  if (s.length === 0) v.add(field, 'must not be empty');
  else if (s.length > max) v.add(field, `must be at most ${max} characters`);
  else if (CONTROL_RE.test(s)) v.add(field, 'must not contain control characters');
  else if (BIDI_OR_LONE_SURROGATE_RE.test(value)) v.add(field, 'must not contain bidirectional controls or lone surrogates');
  return s;
}

/**
 * A name that identifies something and that policies or people match by eye (role and
 * permission names): trimmed, 1..100 characters, and a clean identifier (identifierProblem), so
 * no lookalike of `Administrator` or of a permission can be made.
 */
export function checkIdentifierName(v: Violations, field: string, value: string, max = NAME_MAX_LENGTH): string {
  const s = value.trim();
  if (s.length === 0) v.add(field, 'must not be empty');
  else if (s.length > max) v.add(field, `must be at most ${max} characters`);
  else {
    const problem = identifierProblem(value);
    if (problem) v.add(field, problem);
  }
  return s;
}

export function checkDescription(v: Violations, field: string, value: string): string {
  const s = value.trim();
  if (s.length > DESCRIPTION_MAX_LENGTH) v.add(field, `must be at most ${DESCRIPTION_MAX_LENGTH} characters`);
  if (s.includes('\u0000')) v.add(field, 'must not contain NUL characters');
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
  if (!Number.isInteger(q.page) || q.page < 1 || q.page > PAGE_MAX) v.add('page', `must be an integer from 1 to ${PAGE_MAX}`);
  if (!Number.isInteger(q.pageSize) || q.pageSize < 1 || q.pageSize > 100) v.add('pageSize', 'must be an integer from 1 to 100');
  if (q.q.length > Q_MAX_LENGTH) v.add('q', `must be at most ${Q_MAX_LENGTH} characters`);
  if (q.q.includes('\u0000')) v.add('q', 'must not contain NUL characters');
  v.throwIfAny('The paging or search parameters are not valid.');
  const text = q.q.trim();
  return { page: q.page, pageSize: q.pageSize, q: text.length > 0 ? text : undefined, includeDeleted: q.includeDeleted };
}

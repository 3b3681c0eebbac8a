/**
 * Input rules the directory enforces, whoever calls it (the gateway checks shapes; these are
 * the domain's own limits). Violations are VALIDATION errors naming the field.
 */
import { domainToUnicode } from 'node:url';
import {
  AppError,
  type FieldError,
  PASSWORD_POLICY,
  passwordProblems as policyProblems,
  type RestrictionLevel,
  disallowedCharacter,
  hasLatinLetters,
  hasMixedNumbers,
  isUuid,
  lookalikeKey,
  otherScriptsDrawnAsLatin,
  restrictionLevel,
  withinRestrictionLevel,
} from '@iam/platform';
import type { ListQuery } from './model';

export const PASSWORD_MIN_LENGTH = PASSWORD_POLICY.minLength;
/** Longer passwords are refused before hashing (a megabyte password costs nothing to reject). */
export const PASSWORD_MAX_LENGTH = PASSWORD_POLICY.maxLength;
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
export class Violations {
  private readonly list: FieldError[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  /** The problems found so far. */
  get problems(): readonly FieldError[] {
    return this.list;
  }

  throwIfAny(detail = 'The request is not valid.'): void {
    if (this.list.length > 0) throw AppError.validation(detail, this.list);
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The UTS #39 restriction level identifiers must meet (section 5.2). */
export const IDENTIFIER_RESTRICTION_LEVEL: RestrictionLevel = 'moderately-restrictive';

const codePoint = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why an identifier would not be told apart from another one that looks the same, or undefined.
 * The whole value: no invisible characters (checked before trimming, so a trailing U+FEFF is not
 * silently dropped), and in NFKC (as PRECIS IdentifierClass asks: no fullwidth 'Ａ', no 'e' +
 * combining accent beside a precomposed 'é'). Each of `segments` (default: the whole value), as
 * UTS #39 section 5 asks: every letter, mark and digit Identifier_Status=Allowed (no Lisu 'ꓮ',
 * Cherokee 'Ꭺ', Canadian Syllabics, Coptic or Tifinagh letters), the script mix at most
 * IDENTIFIER_RESTRICTION_LEVEL (no Latin with Cyrillic or Greek), digits of one numbering system
 * only, and beside Latin letters no letters of another script that are all drawn like Latin ones
 * (the Armenian 'օ' of 'jօhn'). With `wholeScriptLookalikes`, a segment without Latin letters may
 * not be spelled only with letters drawn like Latin ones either (Cyrillic 'асе'): for emails,
 * which no lookalike-key uniqueness protects (names have theirs, lookalikeKey).
 */
export function identifierProblem(raw: string, opts: { segments?: (trimmed: string) => readonly string[]; wholeScriptLookalikes?: boolean } = {}): string | undefined {
  if (INVISIBLE_RE.test(raw)) return 'must not contain invisible, control, formatting, private-use or unassigned characters, or spaces other than U+0020';
  const s = raw.trim();
  if (s.normalize('NFKC') !== s) return 'must be in Unicode normalization form NFKC (no compatibility or decomposed characters)';
  for (const part of opts.segments ? opts.segments(s) : [s]) {
    const disallowed = disallowedCharacter(part);
    if (disallowed !== undefined) return `must not contain ${codePoint(disallowed)}: only letters and digits that UTS #39 allows in identifiers (Identifier_Status=Allowed)`;
    if (!withinRestrictionLevel(restrictionLevel(part), IDENTIFIER_RESTRICTION_LEVEL)) {
      return 'must be written in one script, or in Latin with Han and kana, Han and Bopomofo, Han and Hangul, or one other script than Cyrillic or Greek (UTS #39 moderately restrictive)';
    }
    if (hasMixedNumbers(part)) return 'must not mix digits of different numbering systems';
    if (otherScriptsDrawnAsLatin(part)) {
      if (hasLatinLetters(part)) return 'must not mix Latin letters with letters of another script that look like Latin ones';
      if (opts.wholeScriptLookalikes) return 'must not be spelled only with letters that look like Latin ones';
    }
  }
  return undefined;
}

/**
 * An email's local part and domain labels, each checked on its own (so `иван@example.com` and
 * `ivan@пример.рф` stay valid). A label in its ASCII form (`xn--…`, an IDNA A-label) is checked
 * as the Unicode label it stands for, as a mail program shows it; one that does not decode
 * stays as written (and is all ASCII).
 */
const emailSegments = (e: string): string[] => {
  const at = e.lastIndexOf('@');
  if (at < 0) return [e];
  const labels = e.slice(at + 1).split('.').map((label) => (label.startsWith('xn--') ? domainToUnicode(label) || label : label));
  return [e.slice(0, at), ...labels];
};

/** An email address: trimmed and lower-cased, shaped like an address, and a clean identifier (identifierProblem). */
export function checkEmail(v: Violations, field: string, email: string): string {
  const e = normalizeEmail(email);
  if (e.length === 0 || e.length > EMAIL_MAX_LENGTH || !EMAIL_RE.test(e) || CONTROL_RE.test(e)) {
    v.add(field, 'must be a valid email address');
    return e;
  }
  const problem = identifierProblem(email.toLowerCase(), { segments: emailSegments, wholeScriptLookalikes: true });
  if (problem) v.add(field, problem);
  return e;
}

/** Spec §5.7: at least 12 characters with upper- and lower-case letters, a digit and a special character (the platform's PASSWORD_POLICY). */
export function passwordProblems(password: string): string[] {
  return policyProblems(password);
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
 * permission names): trimmed, 1..100 characters, a clean identifier (identifierProblem), and not
 * a lookalike of one of `builtins` (`kind` names them in the message): the same lookalikeKey
 * without being the same name case-insensitively (that one is the uniqueness index's 409).
 * Lookalikes of other live names are the lookalike index's 409 (the stores).
 */
export function checkIdentifierName(v: Violations, field: string, value: string, builtins?: { kind: string; names: readonly string[] }): string {
  const s = value.trim();
  if (s.length === 0) v.add(field, 'must not be empty');
  else if (s.length > NAME_MAX_LENGTH) v.add(field, `must be at most ${NAME_MAX_LENGTH} characters`);
  else {
    const problem = identifierProblem(value);
    const imitated = problem || !builtins ? undefined : builtinLookalike(s, builtins.names);
    if (problem) v.add(field, problem);
    else if (imitated) v.add(field, `looks like the built-in ${builtins!.kind} ${imitated}`);
  }
  return s;
}

/** The one of `builtins` that `name` looks like without being it (case aside), or undefined. */
export function builtinLookalike(name: string, builtins: readonly string[]): string | undefined {
  const key = lookalikeKey(name);
  return builtins.find((b) => b.toLowerCase() !== name.toLowerCase() && lookalikeKey(b) === key);
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

/**
 * Identifier checks of UTS #39 (Unicode Security Mechanisms) section 5: the General Security
 * Profile (Identifier_Status=Allowed, from IdentifierStatus.txt), the restriction levels (5.2)
 * over script sets resolved as in 5.1, mixed numbers (5.3), and whether a string's letters of
 * other scripts are all drawn like Latin ones (its confusables.txt prototypes are Latin).
 */
import { prototypeMap } from './skeleton';
import { IDENTIFIER_ALLOWED } from './uts39-data.generated';

/**
 * UAX #31 Table 4, the Recommended scripts (Common and Inherited aside). Identifier_Status=Allowed
 * admits letters of these scripts only, so script sets are computed over them: a character of
 * any other script has an empty set and makes the string minimally restrictive at best.
 */
export const RECOMMENDED_SCRIPTS = [
  'Arabic', 'Armenian', 'Bengali', 'Bopomofo', 'Cyrillic', 'Devanagari', 'Ethiopic', 'Georgian', 'Greek', 'Gujarati',
  'Gurmukhi', 'Han', 'Hangul', 'Hebrew', 'Hiragana', 'Kannada', 'Katakana', 'Khmer', 'Lao', 'Latin', 'Malayalam',
  'Myanmar', 'Oriya', 'Sinhala', 'Tamil', 'Telugu', 'Thaana', 'Thai', 'Tibetan',
] as const;

const SCRIPT_EXTENSIONS = RECOMMENDED_SCRIPTS.map((name) => [name, new RegExp(`\\p{Script_Extensions=${name}}`, 'u')] as const);
/** Characters used with every script (Script_Extensions Common or Inherited: digits, punctuation, combining marks). */
const ANY_SCRIPT = /[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]/u;
/** UTS #39 5.1: Han, Hiragana, Katakana, Hangul and Bopomofo also count as the writing systems they form. */
const AUGMENTED: Readonly<Record<string, readonly string[]>> = {
  Han: ['Hanb', 'Jpan', 'Kore'],
  Hiragana: ['Jpan'],
  Katakana: ['Jpan'],
  Hangul: ['Kore'],
  Bopomofo: ['Hanb'],
};

type ScriptSet = ReadonlySet<string> | 'any';

/** A character's augmented script extensions among the Recommended scripts; 'any' for Common and Inherited. */
function scriptSet(ch: string): ScriptSet {
  if (ANY_SCRIPT.test(ch)) return 'any';
  const set = new Set<string>();
  for (const [name, re] of SCRIPT_EXTENSIONS) {
    if (!re.test(ch)) continue;
    set.add(name);
    for (const extra of AUGMENTED[name] ?? []) set.add(extra);
  }
  return set;
}

/** The resolved script set of UTS #39 5.1 (the intersection of every character's set), leaving out characters of `without`. */
function resolvedScripts(s: string, without?: string): ScriptSet {
  let acc: ReadonlySet<string> | undefined;
  for (const ch of s) {
    const set = scriptSet(ch);
    if (set === 'any' || (without !== undefined && set.has(without))) continue;
    const prev = acc;
    acc = prev === undefined ? set : new Set([...prev].filter((x) => set.has(x)));
  }
  return acc ?? 'any';
}

let allowed: Uint32Array | undefined;

/** Whether the code point's Identifier_Status is Allowed (binary search of the ranges). */
export function isIdentifierAllowed(cp: number): boolean {
  if (!allowed) {
    const bounds = IDENTIFIER_ALLOWED.flatMap((r) => {
      const [first, last = first] = r.split('..');
      return [parseInt(first!, 16), parseInt(last!, 16)];
    });
    allowed = Uint32Array.from(bounds);
  }
  let lo = 0;
  let hi = allowed.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < allowed[2 * mid]!) hi = mid - 1;
    else if (cp > allowed[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

const LETTER_MARK_NUMBER = /[\p{L}\p{M}\p{N}]/u;

/**
 * The first letter, mark or number of `s` whose Identifier_Status is not Allowed (a letter of a
 * script not recommended for identifiers, such as Lisu 'ꓮ' or Cherokee 'Ꭺ', an obsolete or
 * technical letter, a compatibility form), or undefined. Spaces, punctuation and symbols are not
 * looked at here.
 */
export function disallowedCharacter(s: string): string | undefined {
  for (const ch of s) if (LETTER_MARK_NUMBER.test(ch) && !isIdentifierAllowed(ch.codePointAt(0)!)) return ch;
  return undefined;
}

export type RestrictionLevel = 'ascii' | 'single-script' | 'highly-restrictive' | 'moderately-restrictive' | 'minimally-restrictive' | 'unrestricted';

/**
 * The restriction level of UTS #39 5.2: 'ascii'; 'unrestricted' when a letter, mark or number is
 * not Allowed (disallowedCharacter); 'single-script' when the resolved script set is not empty; 'highly-restrictive' when, Latin aside, it is Han with kana,
 * Bopomofo or Hangul; 'moderately-restrictive' when, Latin aside, it is one script other than
 * Cyrillic and Greek; else 'minimally-restrictive'. Common and Inherited characters do not count.
 */
export function restrictionLevel(s: string): RestrictionLevel {
  // eslint-disable-next-line no-control-regex -- every ASCII character, controls included, is ASCII-only
  if (/^[\u0000-\u007f]*$/.test(s)) return 'ascii';
  if (disallowedCharacter(s) !== undefined) return 'unrestricted';
  const all = resolvedScripts(s);
  if (all === 'any' || all.size > 0) return 'single-script';
  const rest = resolvedScripts(s, 'Latin');
  if (rest === 'any') return 'single-script';
  if (rest.has('Jpan') || rest.has('Kore') || rest.has('Hanb')) return 'highly-restrictive';
  if (rest.size > 0 && !rest.has('Cyrillic') && !rest.has('Greek')) return 'moderately-restrictive';
  return 'minimally-restrictive';
}

const RANK: Readonly<Record<RestrictionLevel, number>> = {
  ascii: 0,
  'single-script': 1,
  'highly-restrictive': 2,
  'moderately-restrictive': 3,
  'minimally-restrictive': 4,
  unrestricted: 5,
};

/** Whether `level` is `limit` or more restrictive. */
export const withinRestrictionLevel = (level: RestrictionLevel, limit: RestrictionLevel): boolean => RANK[level] <= RANK[limit];

const DECIMAL_DIGIT = /\p{Nd}/u;

/** The code point of the zero of the decimal digit `cp` (digits come in runs of ten from zero). */
function zeroOf(cp: number): number {
  let start = cp;
  while (start > 0 && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return cp - ((cp - start) % 10);
}

/** UTS #39 5.3: whether `s` has decimal digits of more than one numbering system ('1' beside Bengali '১'). */
export function hasMixedNumbers(s: string): boolean {
  let zero: number | undefined;
  for (const ch of s) {
    if (!DECIMAL_DIGIT.test(ch)) continue;
    const z = zeroOf(ch.codePointAt(0)!);
    if (zero !== undefined && z !== zero) return true;
    zero = z;
  }
  return false;
}

const LATIN = /\p{Script=Latin}/u;
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
/** A prototype drawn as ASCII letters, digits or punctuation (not as a Latin small capital such as 'ʙ' or 'ᴎ'). */
const ASCII_LOOKING = /^[\u0021-\u007e]+$/;

/** Whether `s` has Latin letters. */
export const hasLatinLetters = (s: string): boolean => [...s].some((ch) => LATIN.test(ch) && /\p{L}/u.test(ch));

/**
 * Whether `s` has letters or digits of scripts other than Latin (Common and Inherited aside), and
 * every one of them is drawn like ASCII: its confusables.txt prototype is ASCII (Cyrillic 'а' →
 * 'a', 'р' → 'p', Armenian 'օ' → 'o', Arabic-Indic '٥' → 'o'). Cyrillic 'асе' and the 'օ' of
 * 'jօhn' are; 'иван' and 'рф' are not (their 'и' and 'ф' look like no ASCII letter).
 */
export function otherScriptsDrawnAsLatin(s: string): boolean {
  const map = prototypeMap();
  const others = [...s.normalize('NFD')].filter((ch) => LETTER_OR_NUMBER.test(ch) && !LATIN.test(ch) && !ANY_SCRIPT.test(ch));
  return others.length > 0 && others.every((ch) => ASCII_LOOKING.test(map.get(ch.codePointAt(0)!) ?? ch));
}

/**
 * Confusable detection of UTS #39 (Unicode Security Mechanisms, section 4) over the data of its
 * confusables.txt (uts39-data.generated.ts, UTS39_DATA_VERSION). Two strings are confusable when
 * their skeletons are equal. A skeleton is for comparing only: it is never shown, stored as a
 * name or used to rewrite one.
 */
import { CONFUSABLE_PROTOTYPES } from './uts39-data.generated';

let prototypes: ReadonlyMap<number, string> | undefined;

/** Source code point → its prototype (decoded on first use). */
export function prototypeMap(): ReadonlyMap<number, string> {
  prototypes ??= new Map(
    CONFUSABLE_PROTOTYPES.map((entry) => {
      const [source, ...target] = entry.split(' ').map((h) => parseInt(h, 16));
      return [source!, String.fromCodePoint(...target)];
    }),
  );
  return prototypes;
}

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * skeleton(X) of UTS #39 section 4: X in NFD, without its default-ignorable code points, each
 * character replaced by its prototype, and the result in NFD again. Letter case is kept:
 * 'A' and 'a' have different skeletons ('rn' and 'm' the same one).
 */
export function skeleton(s: string): string {
  const map = prototypeMap();
  let out = '';
  for (const ch of s.normalize('NFD').replace(DEFAULT_IGNORABLE, '')) out += map.get(ch.codePointAt(0)!) ?? ch;
  return out.normalize('NFD');
}

/**
 * The key two names share when they look alike in any letter case: skeleton(lowercase(skeleton(X))).
 * The inner skeleton first turns letters drawn like Latin capitals into those capitals (Lisu 'ꓮ'
 * has no case; Cherokee 'Ꭺ' lower-cases to a letter drawn as a small capital), so lower-casing
 * then meets them; the outer one maps what lower-casing made ('M' → 'm' → 'rn'). Names are unique case-insensitively, so this
 * key is what a uniqueness index of lookalikes holds. It merges a little more than the eye does:
 * capital 'I' has the prototype 'l', so in capitals 'MAIL' and 'MALL' share a key.
 */
export function lookalikeKey(s: string): string {
  return skeleton(skeleton(s).toLowerCase());
}

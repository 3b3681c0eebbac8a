import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { lookalikeKey, skeleton } from './skeleton';
import { CONFUSABLE_PROTOTYPES, UTS39_DATA_VERSION } from './uts39-data.generated';

describe('UTS #39 skeleton', () => {
  // Pairs of confusables.txt 17.0.0 (each line: the lookalike, what it imitates).
  it.each([
    ['Lisu ꓮ', 'ꓮdministrator', 'Administrator'],
    ['Cherokee Ꭺ', '\u13aadministrator', 'Administrator'],
    ['Canadian Syllabics ᗅ', '\u15c5dministrator', 'Administrator'],
    ['Coptic ⲟ', 'Administrat\u2c9fr', 'Administrator'],
    ['Tifinagh ⵔ', 'ADMINISTRAT\u2d54R', 'ADMINISTRATOR'],
    ['Cyrillic а', 'p\u0430ypal', 'paypal'],
    ['rn and m', 'rn', 'm'],
    ['digit one and small l', 'paypa1', 'paypal'],
    ['Greek Ο and digit zero', '\u039f', '0'],
    ['mathematical bold A', '\u{1d400}dministrator', 'Administrator'],
    ['fullwidth Ａ', '\uff21dministrator', 'Administrator'],
    ['a zero-width space (default-ignorable)', 'Admin\u200bistrator', 'Administrator'],
    ['Armenian օ', 'r\u0585les.manage', 'roles.manage'],
    ['Cyrillic ѕ', 'u\u0455ers.manage', 'users.manage'],
  ])('%s: skeleton(%j) = skeleton(%j)', (_what, lookalike, original) => {
    expect(skeleton(lookalike)).toBe(skeleton(original));
  });

  it.each([
    ['Administrator', 'Adrninistrator'],
    ['users.manage', 'users.rnanage'],
    ['Администратор', 'A\u0434\u028d\u1d0e\u029c\u1d0ec\u1d1bpa\u1d1bop'],
  ])('skeleton(%j) is %j', (value, expected) => {
    expect(skeleton(value)).toBe(expected);
  });

  it('tells apart what does not look alike, and keeps letter case', () => {
    expect(skeleton('Administrator')).not.toBe(skeleton('Auditor'));
    expect(skeleton('Администратор')).not.toBe(skeleton('Administrator'));
    expect(skeleton('A')).not.toBe(skeleton('a'));
    expect(skeleton('é')).not.toBe(skeleton('e'));
  });

  describe('lookalikeKey (skeletons, letter case aside)', () => {
    it.each([
      ['Lisu ꓮ', 'ꓮdministrator', 'Administrator'],
      ['Cherokee Ꭺ, and another letter case', '\u13aadministrator', 'administrator'],
      ['Tifinagh ⵔ beside small letters', 'Administrat\u2d54r', 'Administrator'],
      ['capitals and a Cyrillic А', 'ADMINISTRATOR', '\u0410DMINISTRATOR'],
      ['M in capitals and m', 'ADMIN', 'ADMꓲN'],
      ['Cyrillic, whole word', '\u0410\u0412\u0421', 'abc'],
      ['the same name in another case', 'Desk Lamp', 'desk lamp'],
    ])('%s: %j and %j share a key', (_what, a, b) => {
      expect(lookalikeKey(a)).toBe(lookalikeKey(b));
    });

    it('keeps apart names that do not look alike', () => {
      expect(lookalikeKey('Administrator')).not.toBe(lookalikeKey('Auditor'));
      expect(lookalikeKey('Администратор')).not.toBe(lookalikeKey('Administrator'));
      expect(lookalikeKey('mail')).not.toBe(lookalikeKey('mall'));
      // Lower-case Cherokee is drawn as small capitals, and confusables.txt keeps those apart.
      expect(lookalikeKey('\uab7administrator')).not.toBe(lookalikeKey('Administrator'));
    });
  });

  describe('the data', () => {
    it(`is confusables.txt ${UTS39_DATA_VERSION}, every entry a source and a prototype`, () => {
      expect(UTS39_DATA_VERSION).toBe('17.0.0');
      expect(CONFUSABLE_PROTOTYPES.length).toBeGreaterThan(6_000);
      for (const e of CONFUSABLE_PROTOTYPES) expect(e).toMatch(/^[0-9A-F]{4,6}( [0-9A-F]{4,6})+$/);
    });

    it('is what tools/unicode/generate.mjs makes from the files in tools/unicode (no hand edits)', () => {
      const script = join(__dirname, '..', '..', '..', '..', 'tools', 'unicode', 'generate.mjs');
      expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
    });
  });
});

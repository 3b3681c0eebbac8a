import { disallowedCharacter, hasMixedNumbers, isIdentifierAllowed, otherScriptsDrawnAsLatin, restrictionLevel, withinRestrictionLevel } from './identifier';
import { lookalikeKey } from './skeleton';

describe('UTS #39 identifier checks', () => {
  describe('Identifier_Status=Allowed (IdentifierStatus.txt)', () => {
    it.each([
      ['Lisu ꓮ', 'ꓮdministrator', 'ꓮ'],
      ['Cherokee Ꭺ', '\u13aadministrator', '\u13aa'],
      ['Canadian Syllabics ᗅ', '\u15c5dministrator', '\u15c5'],
      ['Coptic ⲟ', 'Administrat\u2c9fr', '\u2c9f'],
      ['Tifinagh ⵏ', 'Adm\u2d4fnistrator', '\u2d4f'],
      ['Latin alpha ɑ (technical)', '\u0251dmin', '\u0251'],
      ['mathematical bold A', '\u{1d400}dmin', '\u{1d400}'],
    ])('refuses %s', (_what, value, culprit) => {
      expect(disallowedCharacter(value)).toBe(culprit);
      expect(restrictionLevel(value)).toBe('unrestricted');
    });

    it('allows the letters of recommended scripts, and looks only at letters, marks and digits', () => {
      for (const value of ['Administrator', 'Café', 'Администратор', 'Διαχειριστής', '管理者', 'مدير', 'מנהל', 'Sales & Co. (EU) #1']) expect(disallowedCharacter(value)).toBeUndefined();
      expect(isIdentifierAllowed('a'.codePointAt(0)!)).toBe(true);
      expect(isIdentifierAllowed(0x10ffff)).toBe(false);
    });
  });

  describe('restriction level (5.2)', () => {
    it.each([
      ['users.manage', 'ascii'],
      ['Администратор', 'single-script'],
      ['Работа с клиентами', 'single-script'],
      ['Διαχειριστής', 'single-script'],
      ['管理者', 'single-script'],
      ['مدير النظام', 'single-script'],
      ['Café', 'single-script'],
      ['Admin 管理者 かんりしゃ', 'highly-restrictive'],
      ['Admin 관리자 管理', 'highly-restrictive'],
      ['Sales مبيعات', 'moderately-restrictive'],
      ['Team צוות', 'moderately-restrictive'],
      ['Admin प्रबंधक', 'moderately-restrictive'],
      ['p\u0430ypal', 'minimally-restrictive'],
      ['Admin Διαχειριστής', 'minimally-restrictive'],
      ['مدير מנהל', 'minimally-restrictive'],
      ['Admin 관리자 かんり', 'minimally-restrictive'],
    ] as const)('%j is %s', (value, level) => {
      expect(restrictionLevel(value)).toBe(level);
    });

    it('orders the levels', () => {
      expect(withinRestrictionLevel('highly-restrictive', 'moderately-restrictive')).toBe(true);
      expect(withinRestrictionLevel('moderately-restrictive', 'moderately-restrictive')).toBe(true);
      expect(withinRestrictionLevel('minimally-restrictive', 'moderately-restrictive')).toBe(false);
      expect(withinRestrictionLevel('unrestricted', 'moderately-restrictive')).toBe(false);
    });

    it('a pure Cyrillic word passes the level; a pure Cyrillic lookalike of a Latin name is caught by its skeleton instead', () => {
      expect(restrictionLevel('\u0410\u0412\u0421')).toBe('single-script');
      expect(lookalikeKey('\u0410\u0412\u0421')).toBe(lookalikeKey('ABC'));
      expect(lookalikeKey('Администратор')).not.toBe(lookalikeKey('Administrator'));
    });
  });

  it('mixed numbers (5.3): digits of one numbering system only', () => {
    expect(hasMixedNumbers('Room 101')).toBe(false);
    expect(hasMixedNumbers('\u0661\u0662\u0663')).toBe(false);
    expect(hasMixedNumbers('1\u0662\u0663')).toBe(true);
    expect(hasMixedNumbers('\u09e7\u09e8 12')).toBe(true);
    expect(hasMixedNumbers('\u{1d7ce}\u{1d7d8}')).toBe(true); // mathematical bold and double-struck zeros
  });

  it('other scripts drawn as Latin: all their letters have ASCII prototypes', () => {
    for (const value of ['\u0430\u0441\u0435', 'j\u0585hn', '\u0410\u0412\u0421', '\u0392\u0395\u03a4\u0391', '\u0455\u0441\u043e\u0440\u0435.\u0435\u0445\u0435\u0441', 'r\u0585les.manage']) {
      expect([value, otherScriptsDrawnAsLatin(value)]).toEqual([value, true]);
    }
    for (const value of ['john', 'иван', 'пример', 'рф', 'ελένη', 'Sales مبيعات', 'Team צוות', '管理者', 'Café']) {
      expect([value, otherScriptsDrawnAsLatin(value)]).toEqual([value, false]);
    }
  });
});

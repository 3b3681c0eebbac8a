import { AppError } from '@iam/platform';
import { PAGE_MAX, Violations, builtinLookalike, checkEmail, checkIdentifierName, checkListQuery, checkName, normalizeEmail, passwordProblems } from './rules';

describe('directory rules', () => {
  it.each([
    ['Ab1!Ab1!Ab1', 'too short (11)'],
    ['abcdefgh1234!', 'no uppercase'],
    ['ABCDEFGH1234!', 'no lowercase'],
    ['Abcdefghijk!!', 'no digit'],
    ['Abcdefgh12345', 'no special character'],
    [`Aa1!${'x'.repeat(125)}`, 'longer than 128'],
  ])('refuses %s (%s)', (pw) => {
    expect(passwordProblems(pw).length).toBeGreaterThan(0);
  });

  it.each(['Ab1!efghijkl', 'Ünïcødé-Pässw0rd', 'correct Horse 1 battery!'])('accepts %s', (pw) => {
    expect(passwordProblems(pw)).toEqual([]);
  });

  it('normalises emails', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
  });

  it('list query: bounds, NUL, trimming', () => {
    expect(checkListQuery({ page: 2, pageSize: 100, q: '  x ', includeDeleted: true })).toEqual({ page: 2, pageSize: 100, q: 'x', includeDeleted: true });
    expect(checkListQuery({ page: 1, pageSize: 1, q: '   ', includeDeleted: false }).q).toBeUndefined();
    for (const bad of [
      { page: 0, pageSize: 25, q: '', includeDeleted: false },
      { page: 1, pageSize: 101, q: '', includeDeleted: false },
      { page: 1, pageSize: 25, q: 'a\u0000', includeDeleted: false },
      { page: PAGE_MAX + 1, pageSize: 25, q: '', includeDeleted: false },
      { page: Number.MAX_SAFE_INTEGER + 2, pageSize: 25, q: '', includeDeleted: false },
      { page: Infinity, pageSize: 25, q: '', includeDeleted: false },
      { page: 1e20, pageSize: 25, q: '', includeDeleted: false },
    ]) {
      expect(() => checkListQuery(bad)).toThrow(AppError);
    }
    expect(checkListQuery({ page: PAGE_MAX, pageSize: 100, q: '', includeDeleted: false }).page).toBe(PAGE_MAX);
  });

  /** The field errors a check adds for one value (empty when it passes). */
  const errorsOf = (check: (v: Violations, field: string, value: string) => string, value: string) => {
    const v = new Violations();
    check(v, 'name', value);
    try {
      v.throwIfAny();
      return [];
    } catch (e) {
      return (e as AppError).errors ?? [];
    }
  };

  // Each character below makes a name or an email look like another one (or like nothing).
  const INVISIBLE: Array<[string, string]> = [
    ['NUL', '\u0000'],
    ['BEL', '\u0007'],
    ['tab', '\t'],
    ['DEL', '\u007f'],
    ['C1 control', '\u0085'],
    ['soft hyphen', '\u00ad'],
    ['combining grapheme joiner', '\u034f'],
    ['Arabic letter mark', '\u061c'],
    ['Hangul choseong filler', '\u115f'],
    ['Hangul jungseong filler', '\u1160'],
    ['Mongolian vowel separator', '\u180e'],
    ['zero-width space', '\u200b'],
    ['zero-width non-joiner', '\u200c'],
    ['zero-width joiner', '\u200d'],
    ['left-to-right mark', '\u200e'],
    ['right-to-left mark', '\u200f'],
    ['line separator', '\u2028'],
    ['paragraph separator', '\u2029'],
    ['left-to-right embedding', '\u202a'],
    ['right-to-left override', '\u202e'],
    ['word joiner', '\u2060'],
    ['invisible times (Cf)', '\u2062'],
    ['left-to-right isolate', '\u2066'],
    ['pop directional isolate', '\u2069'],
    ['no-break space', '\u00a0'],
    ['en quad', '\u2000'],
    ['narrow no-break space', '\u202f'],
    ['ideographic space', '\u3000'],
    ['Hangul filler', '\u3164'],
    ['variation selector 16', '\ufe0f'],
    ['BOM / zero-width no-break space', '\ufeff'],
    ['halfwidth Hangul filler', '\uffa0'],
    ['replacement character', '\ufffd'],
    ['tag letter A', '\u{e0041}'],
    ['private use', '\ue000'],
    ['supplementary private use', '\u{f0000}'],
    ['unassigned', '\u0378'],
    ['noncharacter', '\ufdd0'],
    ['lone high surrogate', '\ud800'],
    ['lone low surrogate', '\udc00'],
    ['blank Braille pattern', '\u2800'],
  ];

  describe('identifier names (roles, permissions)', () => {
    it.each(INVISIBLE)('refuses %s inside, before and after the name', (_what, c) => {
      for (const value of [`Admini${c}strator`, `${c}Administrator`, `Administrator${c}`]) {
        expect(errorsOf(checkIdentifierName, value)).toEqual([{ field: 'name', message: expect.any(String) }]);
      }
    });

    const MODERATELY_RESTRICTIVE = expect.stringContaining('UTS #39 moderately restrictive');

    it.each([
      ['Cyrillic А', '\u0410dministrator'],
      ['Cyrillic а and о', 'Administr\u0430t\u043er'],
      ['Greek Α', '\u0391dministrator'],
      ['Greek ο', 'users.manage.t\u03bfken'],
      ['Cyrillic in a second word', 'Support \u0430gent'],
      ['Arabic and Hebrew', '\u0645\u062f\u064a\u0631 \u05de\u05e0\u05d4\u05dc'],
    ])('refuses Latin mixed with %s, and other mixes beyond the moderately restrictive level', (_what, value) => {
      expect(errorsOf(checkIdentifierName, value)).toEqual([{ field: 'name', message: MODERATELY_RESTRICTIVE }]);
    });

    it.each([
      ['Lisu ꓮ', 'ꓮdministrator', 'U+A4EE'],
      ['Cherokee Ꭺ', '\u13aadministrator', 'U+13AA'],
      ['Canadian Syllabics ᗅ', '\u15c5dministrator', 'U+15C5'],
      ['Coptic ⲟ', 'Administrat\u2c9fr', 'U+2C9F'],
      ['Tifinagh ⵔ', 'Administrat\u2d54r', 'U+2D54'],
      ['a Lisu-only lookalike', '\ua4ee\ua4d3\ua4df\ua4f2\ua4e0', 'U+A4EE'],
    ])('refuses letters UTS #39 does not allow in identifiers: %s', (_what, value, culprit) => {
      expect(errorsOf(checkIdentifierName, value)).toEqual([{ field: 'name', message: expect.stringContaining(`${culprit}: only letters and digits that UTS #39 allows`) }]);
    });

    it.each([
      ['Armenian օ', 'r\u0585les.manage'],
      ['Arabic-Indic ٥ for o', 'r\u0665les'],
    ])('refuses Latin beside letters of another script all drawn like Latin ones: %s', (_what, value) => {
      expect(errorsOf(checkIdentifierName, value)).toEqual([{ field: 'name', message: 'must not mix Latin letters with letters of another script that look like Latin ones' }]);
    });

    it('refuses digits of two numbering systems', () => {
      expect(errorsOf(checkIdentifierName, 'Auditor 1\u0662')).toEqual([{ field: 'name', message: 'must not mix digits of different numbering systems' }]);
    });

    it.each([
      ['Cyrillic АВС', '\u0410\u0412\u0421'],
      ['Greek ΒΕΤΑ', '\u0392\u0395\u03a4\u0391'],
      ['Cyrillic ѕсоре.ехес', '\u0455\u0441\u043e\u0440\u0435.\u0435\u0445\u0435\u0441'],
    ])('accepts a name in one script drawn like Latin (%s): only a live or built-in name it looks like refuses it', (_what, value) => {
      expect(errorsOf(checkIdentifierName, value)).toEqual([]);
    });

    describe('lookalikes of built-in names', () => {
      const ROLES = { kind: 'role', names: ['Administrator'] };
      const PERMISSIONS = { kind: 'permission', names: ['users.manage', 'roles.manage', 'audit.read'] };
      const check = (builtins: { kind: string; names: string[] }) => (v: Violations, field: string, value: string) => checkIdentifierName(v, field, value, builtins);

      it.each([
        [ROLES, 'Adrninistrator', 'role Administrator'],
        [PERMISSIONS, 'users.rnanage', 'permission users.manage'],
        [PERMISSIONS, 'ro1es.manage', 'permission roles.manage'],
      ])('refuses %j → %j (400: it looks like the built-in %s)', (builtins, value, what) => {
        expect(errorsOf(check(builtins), value)).toEqual([{ field: 'name', message: `looks like the built-in ${what}` }]);
      });

      it('leaves the built-in name itself, in any case, to the uniqueness index (409), and other names alone', () => {
        for (const value of ['Administrator', 'ADMINISTRATOR', 'Auditors', 'Администратор']) expect(errorsOf(check(ROLES), value)).toEqual([]);
        for (const value of ['users.manage', 'Users.Manage', 'users.read']) expect(errorsOf(check(PERMISSIONS), value)).toEqual([]);
      });

      it('names the lookalike', () => {
        expect(builtinLookalike('Adrninistrator', ['Administrator'])).toBe('Administrator');
        expect(builtinLookalike('administrator', ['Administrator'])).toBeUndefined();
      });
    });

    it.each([
      ['fullwidth Ａ', '\uff21dministrator'],
      ['decomposed é', 'Caf\u0065\u0301'],
      ['ligature ﬁ', 'pro\ufb01le.read'],
    ])('refuses %s (not NFKC)', (_what, value) => {
      expect(errorsOf(checkIdentifierName, value)).toEqual([{ field: 'name', message: expect.stringContaining('NFKC') }]);
    });

    it.each(['Administrator', 'users.manage', 'role-permissions.manage', 'Support Agent', 'Café', 'Администратор', 'Работа с клиентами', 'Διαχειριστής', 'Ադմին', '管理者', 'Auditor 2', '  trimmed  ', '2024'])(
      'accepts %s',
      (value) => {
        expect(errorsOf(checkIdentifierName, value)).toEqual([]);
      },
    );

    it('trims, and keeps the empty and length rules', () => {
      const v = new Violations();
      expect(checkIdentifierName(v, 'name', '  Auditors ')).toBe('Auditors');
      expect(errorsOf(checkIdentifierName, '   ')).toEqual([{ field: 'name', message: 'must not be empty' }]);
      expect(errorsOf(checkIdentifierName, 'x'.repeat(101))).toEqual([{ field: 'name', message: 'must be at most 100 characters' }]);
    });
  });

  describe('emails', () => {
    it.each(INVISIBLE)('refuses %s inside, before and after the address', (_what, c) => {
      for (const value of [`ad${c}min@example.com`, `admin@exam${c}ple.com`, `${c}admin@example.com`, `admin@example.com${c}`]) {
        expect(errorsOf(checkEmail, value)).toEqual([{ field: 'name', message: expect.any(String) }]);
      }
    });

    it.each([
      ['Cyrillic а in the local part', '\u0430dmin@example.com'],
      ['Cyrillic е in the domain', 'admin@\u0435xample.com'],
      ['Greek ο in the domain', 'admin@example.c\u03bfm'],
    ])('refuses %s', (_what, value) => {
      expect(errorsOf(checkEmail, value)).toEqual([{ field: 'name', message: expect.stringContaining('UTS #39 moderately restrictive') }]);
    });

    it.each([
      ['Lisu ꓮ in the local part', 'ꓮdmin@example.com', 'U+A4EE'],
      ['Cherokee Ꭺ in the local part (named as stored, lower-cased)', '\u13aadmin@example.com', 'U+AB7A'],
      ['Tifinagh ⵔ in the domain', 'admin@examp\u2d54le.com', 'U+2D54'],
    ])('refuses %s (not Identifier_Status=Allowed)', (_what, value, culprit) => {
      expect(errorsOf(checkEmail, value)).toEqual([{ field: 'name', message: expect.stringContaining(culprit) }]);
    });

    it.each([
      ['Armenian օ beside Latin in the local part', 'j\u0585hn@example.com'],
    ])('refuses %s', (_what, value) => {
      expect(errorsOf(checkEmail, value)).toEqual([{ field: 'name', message: 'must not mix Latin letters with letters of another script that look like Latin ones' }]);
    });

    it.each([
      ['a Cyrillic local part drawn as Latin', '\u0430\u0441\u0435@example.com'],
      ['a Cyrillic domain label drawn as Latin', 'admin@\u0435\u0445\u0440\u043e.com'],
      ['the same label as an IDNA A-label', 'admin@xn--e1asft.com'],
      ['an Armenian local part drawn as Latin', '\u0578\u0585@example.com'],
    ])('refuses %s (no lookalike key protects addresses)', (_what, value) => {
      expect(errorsOf(checkEmail, value)).toEqual([{ field: 'name', message: 'must not be spelled only with letters that look like Latin ones' }]);
    });

    it.each(['ada@example.com', '  Ada@Example.COM ', 'иван@example.com', 'ivan@пример.рф', 'иван@пример.рф', 'ivan@xn--e1afmkfd.xn--p1ai', 'josé@example.com', 'ελένη@example.gr', 'たなか@例え.jp', 'ali@مثال.com'])('accepts %s', (value) => {
      expect(errorsOf(checkEmail, value)).toEqual([]);
    });

    it('still normalises what it accepts', () => {
      expect(checkEmail(new Violations(), 'email', '  Ada@Example.COM ')).toBe('ada@example.com');
    });
  });

  describe('person names', () => {
    it.each([
      ['left-to-right mark', 'Ada\u200e'],
      ['right-to-left override', '\u202eAda'],
      ['first strong isolate', 'A\u2068da'],
      ['Arabic letter mark', 'Ada\u061c'],
      ['lone surrogate', 'Ada\ud800'],
      ['replacement character (a lone surrogate after UTF-8)', 'Ada\ufffd'],
      ['control character', 'A\u0007da'],
    ])('refuses %s', (_what, value) => {
      expect(errorsOf(checkName, value)).toHaveLength(1);
    });

    it.each(['Ada', 'Zoë', "O'Brien", 'Jean-Luc', 'Ольга', 'محمد', '김민준', 'Ana\u00a0María', 'Emoji 👩\u200d💻'])('accepts %s (the display-name rule is unchanged)', (value) => {
      expect(errorsOf(checkName, value)).toEqual([]);
    });
  });
});

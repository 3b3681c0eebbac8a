import { AppError } from '@iam/platform';
import { checkListQuery, normalizeEmail, passwordProblems } from './rules';

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
    ]) {
      expect(() => checkListQuery(bad)).toThrow(AppError);
    }
  });
});

import { policyChecks } from './password-policy';

const policy = {
  minLength: 12,
  maxLength: 16,
  rules: [
    { id: 'digit', label: 'A digit', pattern: '\\p{Nd}' },
    { id: 'no-space', label: 'No space at either end', pattern: '^\\s|\\s$', forbidden: true },
  ],
};
const at = (n: number) => `At least ${n} characters`;

describe('password policy hints', () => {
  it.each([
    ['', [false, false, true]],
    ['short1', [false, true, true]],
    ['long enough 1', [true, true, true]],
    [' long enough 1', [true, true, false]],
    ['far too long for it 1', [false, true, true]],
  ])('%j', (password, met) => {
    expect(policyChecks(policy, password, at).map((c) => c.met)).toEqual(met);
  });

  it('names each requirement in the policy\'s order, the length first in the caller\'s words', () => {
    expect(policyChecks(policy, '', at).map((c) => [c.id, c.label])).toEqual([
      ['length', 'At least 12 characters'],
      ['digit', 'A digit'],
      ['no-space', 'No space at either end'],
    ]);
  });
});

/** The one policy, as a table: roles, acr_values, enrolment, a required new password and what was verified → the next step. */
import { ACR_MFA, ACR_PWD, type PolicyInput, type PolicyStep, acrOf, nextStep, wantsMfa } from './policy';

const REQUIRED = ['Administrator'];

type Row = [string, Omit<PolicyInput, 'requiredRoles'>, PolicyStep];

const rows: Row[] = [
  ['password alone, no factor, no role, no acr', { roles: ['Reader'], amr: ['pwd'], enrolled: false }, 'done'],
  ['password, a factor enrolled', { roles: ['Reader'], amr: ['pwd'], enrolled: true }, 'second_factor'],
  ['password, a required role, no factor yet', { roles: ['Administrator'], amr: ['pwd'], enrolled: false }, 'enrol'],
  ['password, a required role, a factor', { roles: ['Administrator'], amr: ['pwd'], enrolled: true }, 'second_factor'],
  ['password, acr_values ask for mfa, no factor', { roles: ['Reader'], amr: ['pwd'], acrValues: ACR_MFA, enrolled: false }, 'enrol'],
  ['password, acr_values ask for mfa among others, a factor', { roles: ['Reader'], amr: ['pwd'], acrValues: `${ACR_PWD} ${ACR_MFA}`, enrolled: true }, 'second_factor'],
  ['password, acr_values ask for pwd only', { roles: ['Reader'], amr: ['pwd'], acrValues: ACR_PWD, enrolled: false }, 'done'],
  ['password and a TOTP code', { roles: ['Administrator'], amr: ['pwd', 'otp', 'mfa'], acrValues: ACR_MFA, enrolled: true }, 'done'],
  ['a passkey alone (multi-factor)', { roles: ['Administrator'], amr: ['swk', 'mfa'], enrolled: true }, 'done'],
  ['a session without mfa, role now required (refresh, findAccount)', { roles: ['Administrator'], amr: ['pwd'] }, 'second_factor'],
  ['a session without mfa, no role required', { roles: ['Reader'], amr: ['pwd'] }, 'done'],
  ['a session with mfa, role required', { roles: ['Administrator'], amr: ['pwd', 'otp', 'mfa'] }, 'done'],
  ['a token with no amr, acr_values ask for mfa', { roles: [], amr: [], acrValues: ACR_MFA }, 'second_factor'],
  ['roles are matched exactly (case counts)', { roles: ['administrator'], amr: ['pwd'], enrolled: false }, 'done'],
  ['password, a new password required, no factor', { roles: ['Reader'], amr: ['pwd'], enrolled: false, passwordChangeRequired: true }, 'password_change'],
  ['password, a new password required, a factor: the factor first', { roles: ['Reader'], amr: ['pwd'], enrolled: true, passwordChangeRequired: true }, 'second_factor'],
  ['password, a new password required, a required role, no factor: the enrolment first', { roles: ['Administrator'], amr: ['pwd'], enrolled: false, passwordChangeRequired: true }, 'enrol'],
  ['password and a code, a new password required', { roles: ['Administrator'], amr: ['pwd', 'otp', 'mfa'], enrolled: true, passwordChangeRequired: true }, 'password_change'],
  ['a passkey alone, a new password required', { roles: ['Reader'], amr: ['swk', 'mfa'], passwordChangeRequired: true }, 'password_change'],
];

describe('nextStep: the one MFA policy', () => {
  it.each(rows)('%s', (_name, input, expected) => {
    expect(nextStep({ ...input, requiredRoles: REQUIRED })).toBe(expected);
  });

  it('with no MFA_REQUIRED_ROLES a role never asks for a factor', () => {
    expect(nextStep({ roles: ['Administrator'], requiredRoles: [], amr: ['pwd'], enrolled: false })).toBe('done');
  });

  it('acr: mfa when the amr says so; acr_values parsed as a space-separated list', () => {
    expect(acrOf(['pwd', 'otp', 'mfa'])).toBe(ACR_MFA);
    expect(acrOf(['pwd'])).toBe(ACR_PWD);
    expect(wantsMfa(`x ${ACR_MFA}`)).toBe(true);
    expect(wantsMfa(`${ACR_MFA}x`)).toBe(false);
    expect(wantsMfa(undefined)).toBe(false);
  });
});

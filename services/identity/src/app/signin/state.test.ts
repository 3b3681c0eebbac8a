/** The flow's stored state is read through its schema: anything else is no state (never half-parsed). */
import { amrOf, newFlowState, readFlowState } from './state';

describe('flow state', () => {
  const token = 'a'.repeat(43);

  it('a state round-trips (JSON, as the interaction and the mfa-token row keep it)', () => {
    const s = { ...newFlowState({ clientId: 'console', acrValues: 'urn:iam:acr:mfa' }), step: 'second_factor' as const, userId: 'u1', factors: [{ method: 'password', amr: ['pwd'] }], challenge: { mfaToken: token, methods: ['totp', 'recovery_code'] } };
    expect(readFlowState(JSON.parse(JSON.stringify(s)))).toEqual(s);
  });

  it.each([
    ['absent', undefined],
    ['the untyped field of before', { mfaToken: token, methods: ['totp'], enrol: false }],
    ['another version', { ...newFlowState(), v: 2 }],
    ['an unknown step', { ...newFlowState(), step: 'skip' }],
    ['an extra field', { ...newFlowState(), admin: true }],
    ['a malformed token', { ...newFlowState(), challenge: { mfaToken: 'short', methods: [] } }],
    ['a factor without amr', { ...newFlowState(), factors: [{ method: 'password' }] }],
  ])('%s is no state', (_name, stored) => {
    expect(readFlowState(stored)).toBeNull();
  });

  it('amr: each value once; two factors are mfa; a multi-factor passkey alone keeps its own', () => {
    expect(amrOf([{ method: 'password', amr: ['pwd'] }])).toEqual(['pwd']);
    expect(amrOf([{ method: 'password', amr: ['pwd'] }, { method: 'totp', amr: ['otp'] }])).toEqual(['pwd', 'otp', 'mfa']);
    expect(amrOf([{ method: 'webauthn', amr: ['swk', 'mfa'] }])).toEqual(['swk', 'mfa']);
    expect(amrOf([{ method: 'password', amr: ['pwd'] }, { method: 'recovery_code', amr: ['otp'] }, { method: 'x', amr: ['otp'] }])).toEqual(['pwd', 'otp', 'mfa']);
  });
});

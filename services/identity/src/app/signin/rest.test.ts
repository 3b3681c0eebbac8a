/** The REST sign-in only drives the flow: a done step starts a session; a factor step answers its challenge; nothing else is decided here. */
import { randomUUID } from 'node:crypto';
import type { Principal, TokenPair } from '../../domain/model';
import type { SignInFlow, StepResult } from './flow';
import { createRestSignIn } from './rest';
import { newFlowState } from './state';

describe('REST sign-in', () => {
  const principal: Principal = { userId: randomUUID(), firstName: 'R', lastName: 'S', email: 'rest@example.com', roles: [], permissions: [], emailVerified: true };
  const tokens: TokenPair = { accessToken: 'a', refreshToken: 'r', tokenType: 'Bearer', expiresIn: 300, refreshExpiresIn: 3_600 };
  const emailHash = Buffer.alloc(32, 1);
  const started: Array<{ userId: string; amr: readonly string[] }> = [];
  const auth = { startSession: async (p: Principal, _h: Buffer, amr: readonly string[]) => (started.push({ userId: p.userId, amr }), tokens) };
  const done = (amr: string[]): StepResult => ({ state: { ...newFlowState(), step: 'done', userId: principal.userId, factors: [] }, principal, emailHash, amr });
  const challenge = { mfaToken: 'm'.repeat(43), methods: ['totp'], enrolmentRequired: false, passwordChangeRequired: false, expiresIn: 300 };
  const newPassword = { ...challenge, mfaToken: 'p'.repeat(43), methods: [], passwordChangeRequired: true };

  it('a first factor that completes the sign-in starts a session with its amr; one that needs a factor answers the challenge and starts none', async () => {
    const flow: Pick<SignInFlow, 'firstFactor' | 'secondFactor' | 'changePassword'> = {
      firstFactor: async (state, input) => {
        expect(state).toEqual(newFlowState());
        return input.method === 'password' ? done(['pwd']) : { ...done(['pwd']), state: { ...newFlowState(), step: 'second_factor', factors: [] }, challenge };
      },
      secondFactor: async (token) => (expect(token).toBe(challenge.mfaToken), done(['pwd', 'otp', 'mfa'])),
      changePassword: () => Promise.reject(new Error('not this step')),
    };
    const rest = createRestSignIn({ flow, auth });
    started.length = 0;
    await expect(rest.start({ method: 'password' })).resolves.toEqual({ tokens, principal });
    await expect(rest.start({ method: 'other' })).resolves.toEqual({ mfa: challenge });
    await expect(rest.answer(challenge.mfaToken, { method: 'totp', code: '123456' })).resolves.toEqual({ tokens, principal });
    expect(started).toEqual([
      { userId: principal.userId, amr: ['pwd'] },
      { userId: principal.userId, amr: ['pwd', 'otp', 'mfa'] },
    ]);
  });

  it("the flow's refusal passes through untouched (its reason is the edge's to map)", async () => {
    const refusal = Object.assign(new Error('x'), { reason: 'identity.mfa_token_invalid' });
    const rest = createRestSignIn({ flow: { firstFactor: () => Promise.reject(refusal), secondFactor: () => Promise.reject(refusal), changePassword: () => Promise.reject(refusal) }, auth });
    await expect(rest.start({ method: 'password' })).rejects.toBe(refusal);
    await expect(rest.answer('t', { method: 'totp' })).rejects.toBe(refusal);
    await expect(rest.changePassword('t', 'new')).rejects.toBe(refusal);
  });

  it('a factor that leads to the new-password step answers its challenge, no session; the new password completes with the amr of the factors', async () => {
    const afterFactor: StepResult = { ...done(['pwd', 'otp', 'mfa']), state: { ...newFlowState(), step: 'password_change', factors: [] }, challenge: newPassword };
    const rest = createRestSignIn({
      flow: {
        firstFactor: () => Promise.reject(new Error('not this step')),
        secondFactor: async () => afterFactor,
        changePassword: async (token, password) => (expect([token, password]).toEqual([newPassword.mfaToken, 'a-new-long-password']), done(['pwd', 'otp', 'mfa'])),
      },
      auth,
    });
    started.length = 0;
    await expect(rest.answer(challenge.mfaToken, { method: 'totp', code: '123456' })).resolves.toEqual({ mfa: newPassword });
    expect(started).toEqual([]);
    await expect(rest.changePassword(newPassword.mfaToken, 'a-new-long-password')).resolves.toEqual({ tokens, principal });
    expect(started).toEqual([{ userId: principal.userId, amr: ['pwd', 'otp', 'mfa'] }]);
  });
});

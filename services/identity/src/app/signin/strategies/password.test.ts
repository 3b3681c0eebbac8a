/** The password strategy: whom it counts against, a locked email's dummy check, and its one outcome for any failure. */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../../domain/model';
import type { Directory } from '../../../domain/ports';
import { emailKey } from '../lockout';
import { INVALID_CREDENTIALS, passwordStrategy } from './password';

describe('password strategy', () => {
  const p: Principal = { userId: randomUUID(), firstName: 'P', lastName: 'W', email: 'Pat@Example.com', roles: [], permissions: [], emailVerified: true };
  const calls: Array<{ email: string; skip: boolean }> = [];
  const directory: Pick<Directory, 'verifyCredentials'> = {
    verifyCredentials: async (email, password, opts) => {
      calls.push({ email, skip: opts?.skipEvaluation === true });
      const known = email === p.email;
      return { principal: known && password === 'right' && !opts?.skipEvaluation ? p : null, accountExists: known, accountId: known ? p.userId : undefined };
    },
  };
  const s = passwordStrategy({ directory });
  const input = (email: string, password: string) => ({ method: 'password', email, password });

  it('counts against the normalised email; the right password yields amr pwd', async () => {
    const subject = await s.first!.subject(input(' pat@example.COM ', 'right'));
    expect(subject).toEqual({ key: emailKey('pat@example.com'), principal: null });
    const key = emailKey(p.email);
    await expect(s.first!.verify({ key, principal: null, evaluate: true }, input(p.email, 'right'))).resolves.toEqual({ principal: p, amr: ['pwd'], key });
  });

  it('a wrong password, an unknown email, and a locked email (checked at the same cost, never evaluated) are failures', async () => {
    const key = emailKey(p.email);
    await expect(s.first!.verify({ key, principal: null, evaluate: true }, input(p.email, 'wrong'))).resolves.toEqual({ principal: null, accountExists: true, accountId: p.userId });
    await expect(s.first!.verify({ key, principal: null, evaluate: true }, input('x@example.com', 'right'))).resolves.toMatchObject({ principal: null, accountExists: false });
    calls.length = 0;
    await expect(s.first!.verify({ key, principal: null, evaluate: false }, input(p.email, 'right'))).resolves.toMatchObject({ principal: null });
    expect(calls).toEqual([{ email: p.email, skip: true }]);
    expect(s.first!.refusal).toEqual({ message: INVALID_CREDENTIALS, reason: 'identity.invalid_credentials' });
  });

  it('an input of another shape is no attempt: no subject, a failure, the directory not asked', async () => {
    calls.length = 0;
    expect(await s.first!.subject({ method: 'password', email: p.email })).toBeNull();
    expect(await s.first!.subject({ method: 'password', email: p.email, password: 'x'.repeat(1_025) })).toBeNull();
    await expect(s.first!.verify({ key: null, principal: null, evaluate: true }, { method: 'password', email: 7, password: 'right' })).resolves.toMatchObject({ principal: null });
    expect(calls).toEqual([]);
    expect(s.second).toBeUndefined();
    expect(s.enrol).toBeUndefined();
  });
});

import { AppError, isDependencyUnreachable, isErrorReason, toProblem } from './errors';

describe('AppError reasons', () => {
  it('a domain refusal keeps its code (status) and says which refusal in a namespaced reason; a copy with other field errors keeps it', () => {
    const err = new AppError('CONFLICT', 'Not enough stock.', { reason: 'commerce.insufficient_stock', errors: [{ field: 'lines[0].quantity', message: 'too many' }], retryAfter: 3 });
    expect(err).toMatchObject({ code: 'CONFLICT', httpStatus: 409, reason: 'commerce.insufficient_stock' });
    const renamed = err.withFieldErrors([{ field: 'body.lines[0].quantity', message: 'too many' }]);
    expect(renamed).toMatchObject({ code: 'CONFLICT', detail: 'Not enough stock.', reason: 'commerce.insufficient_stock', retryAfter: 3, errors: [{ field: 'body.lines[0].quantity' }] });
    expect(new AppError('CONFLICT', 'Taken.').reason).toBeUndefined();
  });

  it('problem+json is unchanged by a reason (its type says the code; no REST route answers a refusal with one)', () => {
    const p = toProblem(new AppError('CONFLICT', 'Not enough stock.', { reason: 'commerce.insufficient_stock' }), { instance: '/x', traceId: 't' });
    expect(p).toEqual({ type: 'urn:iam:problem:conflict', title: 'Conflict', status: 409, detail: 'Not enough stock.', instance: '/x', traceId: 't' });
  });

  it('a reason is `context.snake_case`', () => {
    expect(['commerce.insufficient_stock', 'identity.mfa_required', 'guard.invalid_input'].every(isErrorReason)).toBe(true);
    expect(['INSUFFICIENT_STOCK', 'commerce', 'commerce.', '.x', 'Commerce.stock', 'commerce.stock-out', ''].some(isErrorReason)).toBe(false);
  });
});

describe('isDependencyUnreachable', () => {
  it('a database restarting, refused or dropped under a query is unreachable (503), by code or message, wrapped or not', () => {
    for (const err of [
      { code: 'ECONNREFUSED' },
      { message: 'Connection terminated unexpectedly' },
      { name: 'QueryRunnerAlreadyReleasedError', message: 'Query runner already released. Cannot run queries anymore.' },
      { name: 'QueryRunnerProviderAlreadyReleasedError', message: 'Entity manager’s query runner was already released' },
      { message: 'query failed', driverError: { code: '57P01' } },
      { message: 'outer', cause: { message: 'Connection terminated due to connection timeout' } },
    ]) {
      expect({ err, unreachable: isDependencyUnreachable(err) }).toEqual({ err, unreachable: true });
    }
  });

  it('every SQLSTATE of a connection exception (class 08) or operator intervention (57P), and 55000 at connect, is unreachable', () => {
    const codes = ['08000', '08001', '08003', '08004', '08006', '08007', '08P01', '57P01', '57P02', '57P03', '57P04', '57P05', '53300'];
    for (const code of codes) {
      for (const err of [{ code, message: 'x' }, { message: 'query failed', driverError: { code } }, { message: 'outer', cause: { code } }]) {
        expect({ code, err, unreachable: isDependencyUnreachable(err) }).toEqual({ code, err, unreachable: true });
      }
    }
    const refused = { code: '55000', message: 'database "directory" is not currently accepting connections' };
    expect(isDependencyUnreachable(refused)).toBe(true);
    expect(isDependencyUnreachable({ message: 'query failed', driverError: refused })).toBe(true);
  });

  it('anything else is not: other SQLSTATEs, 55000 that is not a refused connection', () => {
    for (const err of [
      new Error('boom'),
      { code: '23505', message: 'duplicate key value' },
      { code: '55000', message: 'currval of sequence "s" is not yet defined in this session' },
      { code: '57014', message: 'canceling statement due to statement timeout' },
      { code: '22008', message: 'timestamp out of range' },
      undefined,
      'text',
    ]) {
      expect(isDependencyUnreachable(err)).toBe(false);
    }
  });
});

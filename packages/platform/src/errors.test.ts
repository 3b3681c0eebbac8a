import { isDependencyUnreachable } from './errors';

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

  it('anything else is not', () => {
    for (const err of [new Error('boom'), { code: '23505', message: 'duplicate key value' }, undefined, 'text']) {
      expect(isDependencyUnreachable(err)).toBe(false);
    }
  });
});

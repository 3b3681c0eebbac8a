import type { HealthSnapshot } from '@iam/platform/core';
import { AppError } from '@iam/platform/core';
import { UPSTREAM_CHECK_DEADLINE_MS, UPSTREAM_DOWN_AFTER_MS, failFast, knownDown } from './upstreams';

const at = (ms: number): Date => new Date(1_700_000_000_000 + ms);

function snapshot(status: 'up' | 'down', downForMs: number, timedOut = false): HealthSnapshot {
  return {
    ready: true,
    checks: { commerce: status },
    informational: ['commerce'],
    checkedAt: at(downForMs),
    since: { commerce: at(0) },
    timedOut: timedOut ? ['commerce'] : [],
  };
}

describe('knownDown: when calls to an upstream fail fast', () => {
  it('not before the first check, nor while it is up', () => {
    expect(knownDown(undefined, 'commerce')).toBe(false);
    expect(knownDown(snapshot('up', 5_000), 'commerce')).toBe(false);
  });

  it('after two checks in a row that got a refusal or a "not serving"', () => {
    expect(knownDown(snapshot('down', 0), 'commerce')).toBe(false);
    expect(knownDown(snapshot('down', UPSTREAM_DOWN_AFTER_MS), 'commerce')).toBe(true);
  });

  it('never while its checks only time out (a starved event loop is not an upstream outage)', () => {
    expect(knownDown(snapshot('down', 60_000, true), 'commerce')).toBe(false);
  });

  it('not once a call got an answer after the failing check may have started (the check saw an outage that has ended)', () => {
    const s = snapshot('down', 5_000);
    expect(knownDown(s, 'commerce', s.checkedAt.getTime() - UPSTREAM_CHECK_DEADLINE_MS - 1)).toBe(true);
    expect(knownDown(s, 'commerce', s.checkedAt.getTime() - UPSTREAM_CHECK_DEADLINE_MS)).toBe(false);
  });
});

describe('failFast', () => {
  it('answers UNAVAILABLE without calling while down, and reports calls that got an answer (a result or an upstream error)', async () => {
    const answered: string[] = [];
    let isDown = false;
    let calls = 0;
    const client = failFast(
      'directory',
      {
        ok: async () => (calls++, 'ok'),
        missing: async () => { calls++; throw AppError.notFound('no such user'); },
        unreachable: async () => { calls++; throw AppError.unavailable('refused'); },
      },
      () => isDown,
      (n) => answered.push(n),
    );
    await expect(client.ok()).resolves.toBe('ok');
    await expect(client.missing()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(client.unreachable()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(answered).toEqual(['directory', 'directory']);
    isDown = true;
    await expect(client.ok()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(calls).toBe(3);
  });
});

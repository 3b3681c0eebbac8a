import type { HealthSnapshot } from '@iam/platform/core';
import { UPSTREAM_DOWN_AFTER_MS, knownDown } from './upstreams';

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
});

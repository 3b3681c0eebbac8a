/** How answers are judged and when the next attempt goes (Standard Webhooks 1.0's rules). */
import { STANDARD_SCHEDULE_S, delayBefore, judgeStatus, parseRetryAfter, parseSchedule } from './delivery-policy';

describe('the delivery policy', () => {
  it('2xx delivers; 410 disables; 3xx is a failure never followed; content refusals are the message’s, the rest the endpoint’s', () => {
    expect(judgeStatus(204)).toEqual({ outcome: 'delivered', endpointFailure: false });
    expect(judgeStatus(410)).toEqual({ outcome: 'gone', endpointFailure: true });
    expect(judgeStatus(301)).toEqual({ outcome: 'redirect', endpointFailure: true });
    for (const s of [400, 409, 413, 415, 422]) expect(judgeStatus(s)).toEqual({ outcome: 'failed', endpointFailure: false });
    for (const s of [401, 403, 404, 408, 429, 500, 502, 503, 504]) expect(judgeStatus(s)).toEqual({ outcome: 'failed', endpointFailure: true });
  });

  it("the default schedule is the spec's ten attempts over about three days, with ±10 % jitter; after the last, none", () => {
    expect(STANDARD_SCHEDULE_S).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(STANDARD_SCHEDULE_S.reduce((a, b) => a + b, 0) / 3600).toBeCloseTo(75.6, 1);
    expect(delayBefore(STANDARD_SCHEDULE_S, 3, { random: () => 0 })).toBe(270_000);
    expect(delayBefore(STANDARD_SCHEDULE_S, 3, { random: () => 1 })).toBe(330_000);
    expect(delayBefore(STANDARD_SCHEDULE_S, 1, { random: () => 0.5 })).toBe(0);
    expect(delayBefore(STANDARD_SCHEDULE_S, 11)).toBeUndefined();
  });

  it('Retry-After (seconds or a date) is a floor, at most a day', () => {
    expect(parseRetryAfter('120')).toBe(120);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 1)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(60);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(delayBefore([0, 5], 2, { retryAfterS: 60, random: () => 0.5 })).toBe(60_000);
    expect(delayBefore([0, 5], 2, { retryAfterS: 10 ** 9, random: () => 0.5 })).toBe(86_400_000);
  });

  it('WEBHOOK_RETRY_SCHEDULE parses seconds, comma-separated, and names what is wrong', () => {
    expect(parseSchedule('0, 1.5,30')).toEqual([0, 1.5, 30]);
    expect(parseSchedule('0,-1')).toMatch(/not a number/);
    expect(parseSchedule('0,x')).toMatch(/not a number/);
    expect(parseSchedule('99999999')).toMatch(/30 days/);
  });
});

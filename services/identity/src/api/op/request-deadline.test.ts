/**
 * The provider's deadline for a request's work (issue #35, item 3): what the gateway has left
 * (iam-timeout-ms) less a tenth, at most half a second, so the provider's own answer arrives
 * before the gateway gives up; nothing without the header or with a malformed one.
 */
import { requestDeadline } from './request-deadline';

describe('requestDeadline', () => {
  const now = 1_000_000;
  it.each([
    ['5000', now + 4_500],
    ['2000', now + 1_800],
    ['200', now + 180],
    ['600000', now + 120_000 - 500],
  ])('iam-timeout-ms %s → the work ends at now + %d', (header, deadline) => {
    expect(requestDeadline(header, now)).toBe(deadline);
  });

  it.each([[undefined], [''], ['0'], ['-5'], ['5e3'], ['1.5'], [['100', '200']], ['9999999999']])('%p → no deadline', (header) => {
    expect(requestDeadline(header, now)).toBeUndefined();
  });
});

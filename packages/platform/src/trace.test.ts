import { formatTraceparent, parseTraceIdHeader, parseTraceparent, traceFromCarrier } from './trace';

const TID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('trace context', () => {
  it('parses a valid traceparent', () => {
    expect(parseTraceparent(`00-${TID}-00f067aa0ba902b7-01`)).toEqual({ traceId: TID, parentId: '00f067aa0ba902b7', flags: '01' });
  });

  it.each([
    ['garbage', 'not-a-traceparent'],
    ['uppercase hex', `00-${TID.toUpperCase()}-00f067aa0ba902b7-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['all-zero span id', `00-${TID}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TID}-00f067aa0ba902b7-01`],
    ['trailing data on version 00', `00-${TID}-00f067aa0ba902b7-01-extra`],
    ['too long', `00-${TID}-00f067aa0ba902b7-01${'x'.repeat(200)}`],
  ])('rejects %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });

  it('X-Trace-Id must be exactly 32 hex characters', () => {
    expect(parseTraceIdHeader(TID)).toBe(TID);
    expect(parseTraceIdHeader(TID.toUpperCase())).toBe(TID);
    expect(parseTraceIdHeader(`${TID}0`)).toBeNull();
    expect(parseTraceIdHeader('z'.repeat(32))).toBeNull();
    expect(parseTraceIdHeader(`${TID.slice(0, 31)}\n`)).toBeNull();
  });

  it('continues traceparent first, then X-Trace-Id, else starts a new trace', () => {
    const fromTp = traceFromCarrier((k) => ({ traceparent: `00-${TID}-00f067aa0ba902b7-01`, 'x-trace-id': 'a'.repeat(32) })[k]);
    expect(fromTp.traceId).toBe(TID);
    expect(fromTp.spanId).not.toBe('00f067aa0ba902b7');
    expect(traceFromCarrier((k) => ({ 'x-trace-id': 'a'.repeat(32) })[k]).traceId).toBe('a'.repeat(32));
    const fresh = traceFromCarrier(() => undefined);
    expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(formatTraceparent(fresh)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});

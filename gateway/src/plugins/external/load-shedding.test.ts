import { sheddingResolutionMs } from './load-shedding';

describe('load shedding', () => {
  it('samples the event loop as coarsely as its threshold allows: a quarter of it, 5 to 250 ms', () => {
    // The default threshold (1 s): 4 wake-ups a second, not under-pressure's 100.
    expect(sheddingResolutionMs(1_000)).toBe(250);
    expect(sheddingResolutionMs(5_000)).toBe(250);
    expect(sheddingResolutionMs(200)).toBe(50);
    expect(sheddingResolutionMs(20)).toBe(5);
    expect(sheddingResolutionMs(1)).toBe(5);
  });
});

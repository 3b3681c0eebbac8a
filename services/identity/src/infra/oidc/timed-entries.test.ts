/** TimedEntries: freshness, take-once, and the bound (the oldest go first). */
import { TimedEntries } from './timed-entries';

describe('TimedEntries', () => {
  let now = 1_000_000;
  beforeEach(() => jest.spyOn(Date, 'now').mockImplementation(() => now));
  afterEach(() => jest.restoreAllMocks());

  it('answers while fresh, not after', () => {
    const t = new TimedEntries<string>(100);
    t.set('a', 'A');
    now += 100;
    expect(t.get('a')).toBe('A');
    now += 1;
    expect(t.get('a')).toBeUndefined();
  });

  it('take answers once', () => {
    const t = new TimedEntries<string>(100);
    t.set('a', 'A');
    expect(t.take('a')).toBe('A');
    expect(t.take('a')).toBeUndefined();
    expect(t.get('a')).toBeUndefined();
  });

  it('keeps at most max entries, dropping the oldest; setting a key again makes it the newest', () => {
    const t = new TimedEntries<string>(10_000, 2);
    t.set('a', 'A');
    now += 1;
    t.set('b', 'B');
    now += 1;
    t.set('a', 'A2');
    now += 1;
    t.set('c', 'C');
    expect(t.get('b')).toBeUndefined();
    expect(t.get('a')).toBe('A2');
    expect(t.get('c')).toBe('C');
  });
});

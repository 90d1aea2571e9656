import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../../main/common/clock.js';

/*
 * isoTimestamp keeps the text up to the second between calls: it must give exactly what a Date gives, across
 * second, day and year boundaries, backwards in time (a clock set back), before 1970 and past year 9999.
 */
describe('isoTimestamp', () => {
  it('is Date#toISOString for every millisecond around boundaries, in any order', () => {
    const anchors = [
      Date.UTC(2026, 11, 2, 14, 31, 58, 0),
      Date.UTC(2026, 11, 31, 23, 59, 59, 0), // the next second is another day and year
      Date.UTC(2028, 1, 29, 0, 0, 0, 0),
      0,
      -1_000, // before 1970: the second is negative
      Date.UTC(9999, 11, 31, 23, 59, 59, 0), // the next second's year has six digits and a sign
    ];
    const times: number[] = [];
    for (const anchor of anchors) for (let ms = -1_005; ms <= 2_005; ms += 1) times.push(anchor + ms);
    // Forwards, then backwards (the cached second goes stale both ways), then jumping between anchors.
    const orders = [times, [...times].reverse(), times.filter((_, i) => i % 997 === 0).reverse()];
    for (const order of orders)
      for (const ms of order) {
        const expected = new Date(ms).toISOString();
        if (isoTimestamp(ms) !== expected) expect(isoTimestamp(ms)).toBe(expected);
      }
    expect(isoTimestamp(Date.UTC(10000, 0, 1, 0, 0, 0, 7))).toBe('+010000-01-01T00:00:00.007Z');
  });

  it('drops a fractional millisecond as a Date does, and reads the clock when given no time', () => {
    const ms = Date.UTC(2026, 11, 2, 14, 31, 58, 41);
    expect(isoTimestamp(ms + 0.9)).toBe(new Date(ms + 0.9).toISOString());
    const before = Date.now();
    const stamped = Date.parse(isoTimestamp());
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });
});

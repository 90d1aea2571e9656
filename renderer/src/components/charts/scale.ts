/*
 * The arithmetic of the hand-written charts: round axis maxima and evenly spaced ticks. Pure, so the charts
 * stay dumb and this is unit-tested.
 */

/** The smallest "round" number (1, 2, 2.5 or 5 times a power of ten) at or above `value`; 1 for 0 or less. */
export function niceCeiling(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    const candidate = step * power;
    // A tiny tolerance so 0.30000000000000004 is 0.3, not 0.5.
    if (candidate >= value * (1 - 1e-9)) return candidate;
  }
  return 10 * power;
}

/** How many steps split a round maximum into round steps: 4 for 2×10ⁿ (0.5 each), else 5 (0.2, 0.5 or 1). */
export function niceTickCount(max: number): number {
  if (!(max > 0) || !Number.isFinite(max)) return 4;
  const mantissa = max / 10 ** Math.floor(Math.log10(max));
  return Math.abs(mantissa - 2) < 1e-9 ? 4 : 5;
}

/** `count + 1` ticks from 0 to `max` inclusive, evenly spaced (by default round steps of a round maximum). */
export function ticksUpTo(max: number, count = niceTickCount(max)): number[] {
  return Array.from({ length: count + 1 }, (_, index) => (max * index) / count);
}

/** `value` as a share of `max`, clamped to 0…1 (0 when `max` is not positive). */
export function shareOf(value: number, max: number): number {
  if (!(max > 0)) return 0;
  return Math.min(1, Math.max(0, value / max));
}

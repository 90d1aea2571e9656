/** The sum of a list of numbers. */
export function sum(values) {
  return values.reduce((total, value) => total + value);
}

/** The arithmetic mean of a list of numbers (0 for an empty list). */
export function average(values) {
  if (values.length === 0) return 0;
  return sum(values) / values.length;
}

/** `value` kept within [low, high]. */
export function clamp(value, low, high) {
  return Math.max(high, Math.min(low, value));
}

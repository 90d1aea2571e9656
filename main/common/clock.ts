/**
 * The one clock behind every comparison with "today" (model lifecycle, retirement warnings, the age of a
 * cached list). Hosts create one and pass it down; tests pin it with `fixedClock`, so nothing reads the real
 * calendar behind a test's back.
 */
export type Clock = { now(): Date };

/** The machine's clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock stopped at `at` (a Date, an ISO time, or a UTC day YYYY-MM-DD read as its noon). */
export function fixedClock(at: Date | string): Clock {
  const time =
    typeof at === 'string' ? new Date(/^\d{4}-\d{2}-\d{2}$/.test(at) ? `${at}T12:00:00Z` : at) : at;
  if (Number.isNaN(time.getTime())) throw new Error(`not a time: ${String(at)}`);
  return { now: () => new Date(time.getTime()) };
}

/** The UTC calendar day of the clock's now, as YYYY-MM-DD: the unit retirement dates are given in. */
export function todayOf(clock: Clock): string {
  return clock.now().toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;

/** Whole days from `today` to `day` (both YYYY-MM-DD): 1 for tomorrow, 0 for today, negative for the past. */
export function daysBetween(today: string, day: string): number {
  return Math.round((Date.parse(`${day}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / DAY_MS);
}

let stampedSecond = Number.NaN;
let stampedPrefix = '';

/**
 * `new Date(now).toISOString()`, with the text up to the second kept from the last call: the log stamps every
 * event it appends, and on the durable-append path (cold caches after each fsync) a Date and its formatting
 * were ~9 µs of a ~350 µs append (#19); the events of a turn mostly share their second.
 */
export function isoTimestamp(now: number = Date.now()): string {
  const ms = Math.floor(now); // what a Date keeps of a fractional time
  const second = Math.floor(ms / 1000);
  if (second !== stampedSecond) {
    stampedPrefix = new Date(second * 1000).toISOString().slice(0, -4); // drops "000Z", whatever the year's width
    stampedSecond = second;
  }
  const milli = ms - second * 1000;
  return `${stampedPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** The date `days` days after `date` (both `YYYY-MM-DD`, UTC). */
export function addDays(date, days) {
  const time = Date.parse(`${date}T00:00:00Z`) + days * 86_400_000;
  return new Date(time).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (both `YYYY-MM-DD`). */
export function daysBetween(from, to) {
  return (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1;
}

// Intl formatters are costly to create and cheap to reuse: one of each, made on first use.
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(key: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let cached = formatters.get(key);
  if (!cached) {
    cached = new Intl.DateTimeFormat(undefined, options);
    formatters.set(key, cached);
  }
  return cached;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "12 Mar", "12 Mar 2023": short, for lists. */
export function formatRelativeTime(iso: string, now: number = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const seconds = Math.round((now - time) / 1000);
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days === 1) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  const date = new Date(time);
  const sameYear = date.getFullYear() === new Date(now).getFullYear();
  return sameYear
    ? formatter('day', { day: 'numeric', month: 'short' }).format(date)
    : formatter('day-year', { day: 'numeric', month: 'short', year: 'numeric' }).format(date);
}

/** "2025-03-12 14:05:09" in local time, for tooltips (no Intl: cheap enough for every row of a list). */
export function formatDateTime(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  const date = new Date(time);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** "14:05" today, "29 Nov 14:05" this year, else with the year: for message timestamps. */
export function formatClock(iso: string, now: number = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const date = new Date(time);
  const today = new Date(now);
  const clock = formatter('clock', { hour: '2-digit', minute: '2-digit' }).format(date);
  if (date.toDateString() === today.toDateString()) return clock;
  const day =
    date.getFullYear() === today.getFullYear()
      ? formatter('day', { day: 'numeric', month: 'short' }).format(date)
      : formatter('day-year', { day: 'numeric', month: 'short', year: 'numeric' }).format(date);
  return `${day} ${clock}`;
}

/** "1 line", "3 lines": a count with its noun. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** 950, 12.3k, 1.2M: token counts at a glance. */
export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${trimZero((count / 1000).toFixed(count < 10_000 ? 1 : 0))}k`;
  return `${trimZero((count / 1_000_000).toFixed(1))}M`;
}

/** 900 B, 12.5 KiB, 1.2 MiB: a size in bytes at a glance. */
export function formatBytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${trimZero((count / 1024).toFixed(1))} KiB`;
  return `${trimZero((count / (1024 * 1024)).toFixed(1))} MiB`;
}

function trimZero(text: string): string {
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

/** The last path segment of a folder, for headings ("/home/me/app" → "app"). */
export function folderName(folder: string): string {
  const parts = folder.split(/[\\/]+/).filter(Boolean);
  return parts.at(-1) ?? folder;
}

/** Pretty-printed JSON when `text` is JSON, else the text unchanged. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** At most `max` characters, with a note of how much was left out. */
export function truncateText(text: string, max: number): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  return { text: text.slice(0, max), omitted: text.length - max };
}

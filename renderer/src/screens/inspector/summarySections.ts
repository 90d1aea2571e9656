/** One `##` section of a compaction summary. */
export type SummarySection = { title: string; level: number };

/** The Markdown headings of a summary (levels 1–3), in order, outside fenced code blocks. Pure. */
export function summarySections(summary: string): SummarySection[] {
  const sections: SummarySection[] = [];
  let fenced = false;
  for (const line of summary.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const match = /^(#{1,3})\s+(.+?)\s*#*\s*$/.exec(line);
    if (match?.[1] && match[2])
      sections.push({ title: match[2].replace(/[*_`]/g, ''), level: match[1].length });
  }
  return sections;
}

/** The event numbers a summary points to (`#42`, `#12–#15` counts both ends), in order of first mention, within `from`…`through`. */
export function referencedSeqs(summary: string, from: number, through: number): number[] {
  const seen = new Set<number>();
  for (const match of summary.matchAll(/(?:^|[^\w&])#(\d{1,9})\b/g)) {
    const seq = Number(match[1]);
    if (seq >= from && seq <= through) seen.add(seq);
  }
  return [...seen];
}

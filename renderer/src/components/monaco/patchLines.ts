/** How one line of a unified diff is shown. */
export type PatchLineKind = 'added' | 'removed' | 'hunk' | 'header' | 'context';

/**
 * Classifies each line of a unified diff (git's or the `diff` package's): inside a hunk `+`/`-`/space lines
 * are content, so a removed line that reads `--- x` stays a removed line; outside, everything but a hunk
 * header is a file header. Pure.
 */
export function classifyPatchLines(lines: readonly string[]): PatchLineKind[] {
  let inHunk = false;
  return lines.map((line): PatchLineKind => {
    if (line.startsWith('@@')) {
      inHunk = true;
      return 'hunk';
    }
    if (inHunk) {
      if (line.startsWith('+')) return 'added';
      if (line.startsWith('-')) return 'removed';
      if (line === '' || line.startsWith(' ') || line.startsWith('\\')) return 'context';
      inHunk = false;
    }
    return 'header';
  });
}

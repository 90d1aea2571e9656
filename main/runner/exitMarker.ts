/**
 * Why a marker: when the last process holding a pty's slave side exits, Linux may report end-of-file
 * to the master before the final bytes in flight were read (measured: 2-3 of 8 runs of a 100 MB flood
 * lost their last few KB, with or without bwrap). So the command runs under a small wrapper that prints
 * a private escape sequence carrying the exit code and then stays alive; the runner reads everything up
 * to the marker (a pty keeps order), removes it from the stream, and only then kills the tree.
 *
 * It stays alive by reading the pty, which nothing ever writes to, until end-of-file: the pty's master is
 * Keel's, so the wait ends the moment Keel is gone, however it died (issue 20: a fixed `sleep 86400` here
 * was the one part of a box that outlived a killed Keel by design, as PID 1 of its namespace for a day,
 * whenever the parent-death chain of ./lifeline.ts missed it).
 */

/** The marker's fixed prefix: an OSC sequence that terminals ignore. */
const PREFIX = '\u001b]7777;keel-exit;';
const BEL = '\u0007';

/**
 * Shell text that runs `command` in a child bash, prints the exit marker, and then waits to be killed or for
 * its pty to close (the runner gone).
 * `memoryKb` sets RLIMIT_AS (`ulimit -v`) for the command when no cgroup caps its memory.
 */
export function wrapWithExitMarker(
  command: string,
  nonce: string,
  options: { memoryKb?: number } = {},
): string {
  const limit =
    options.memoryKb === undefined
      ? []
      : [`ulimit -v ${Math.trunc(options.memoryKb)} || echo 'keel: could not set the memory limit' >&2`];
  return [
    ...limit,
    `bash -c ${shellQuote(command)}`,
    'keel_status=$?',
    `printf '\\033]7777;keel-exit;${nonce};%d\\007' "$keel_status"`,
    // Stay alive, holding the pty open, until the runner has read the marker and kills the tree, or until
    // the pty's master closes: read then fails and stdin is no terminal any more (hung up: the runner is
    // gone). A read that fails on a live terminal (a command left it non-blocking) is retried each second.
    'while :; do',
    '  read -r _ 2>/dev/null && continue',
    '  [ -t 0 ] || exit 0',
    '  sleep 1',
    'done',
  ].join('\n');
}

/** What one chunk held once the marker is taken out. */
export interface MarkerScan {
  text: string;
  /** The command's exit status, in the chunk where the marker completed. */
  exitCode?: number;
}

/** Finds and removes the exit marker in a text stream, holding back a possible partial marker at a chunk end. */
export interface ExitMarkerScanner {
  push(text: string): MarkerScan;
  /** Releases held-back text (end of stream without a complete marker). */
  flush(): string;
}

/** Starts a scanner for the marker with this run's `nonce`. Text after the marker passes through unchanged. */
export function createExitMarkerScanner(nonce: string): ExitMarkerScanner {
  const head = `${PREFIX}${nonce};`;
  let held = '';
  let found = false;
  return {
    push(chunk) {
      if (found) return { text: chunk };
      const text = held + chunk;
      held = '';
      const start = text.indexOf(head);
      if (start >= 0) {
        const end = text.indexOf(BEL, start + head.length);
        if (end < 0) {
          // The exit code has not fully arrived yet; it is at most a few digits.
          if (text.length - start > head.length + 12) return { text };
          held = text.slice(start);
          return { text: text.slice(0, start) };
        }
        const digits = text.slice(start + head.length, end);
        if (/^\d{1,3}$/.test(digits)) {
          found = true;
          return { text: text.slice(0, start) + text.slice(end + 1), exitCode: Number(digits) };
        }
        return { text };
      }
      const partial = longestPrefixSuffix(text, head);
      held = text.slice(text.length - partial);
      return { text: text.slice(0, text.length - partial) };
    },
    flush() {
      const rest = held;
      held = '';
      return rest;
    },
  };
}

/** Length of the longest suffix of `text` that is a proper prefix of `marker` (which starts with ESC). */
function longestPrefixSuffix(text: string, marker: string): number {
  // The marker holds a single ESC, at its start, so a partial marker can only begin at the last ESC.
  const escape = text.lastIndexOf('\u001b');
  if (escape < 0) return 0;
  const tail = text.slice(escape);
  return tail.length < marker.length && marker.startsWith(tail) ? tail.length : 0;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

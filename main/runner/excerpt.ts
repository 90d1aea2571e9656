import { stripVTControlCharacters } from 'node:util';

/** How much of a command's output the model sees: the first and last bytes, ANSI stripped. */
export interface ExcerptLimits {
  headBytes: number;
  tailBytes: number;
}

/** The model's view of a command's output. */
export interface Excerpt {
  /** Head + omission line + tail, or the whole (cleaned) output when it fits. */
  text: string;
  /** True when some output is not in `text` (it is still whole in the artifact). */
  truncated: boolean;
  /** Total bytes pushed (UTF-8), i.e. the size of the artifact. */
  bytes: number;
}

/** Collects a bounded head and tail of a stream; memory stays O(head + tail) whatever the output size. */
export interface ExcerptCollector {
  push(text: string): void;
  /** The last few KB seen, cleaned (used to recognise out-of-memory messages). */
  tail(): string;
  finish(artifactHandle: string): Excerpt;
}

/** Raw text kept is a multiple of the limit so that stripping escape sequences still leaves enough. */
const RAW_FACTOR = 4;

/**
 * Starts an excerpt collector. Escape sequences are stripped at the end (on the kept head and tail), so
 * a sequence split between chunks is still removed; carriage-return progress lines keep their last state.
 */
export function createExcerptCollector(limits: ExcerptLimits): ExcerptCollector {
  const headCap = limits.headBytes * RAW_FACTOR;
  const tailCap = limits.tailBytes * RAW_FACTOR;
  let head = '';
  let headComplete = false;
  let tailParts: string[] = [];
  let tailLength = 0;
  let bytes = 0;
  let sawEverything = true;

  const keepTail = (text: string): void => {
    tailParts.push(text);
    tailLength += text.length;
    if (tailLength > tailCap * 2) {
      const joined = tailParts.join('').slice(-tailCap);
      tailParts = [joined];
      tailLength = joined.length;
    }
  };

  return {
    push(text) {
      if (text.length === 0) return;
      bytes += Buffer.byteLength(text, 'utf8');
      if (!headComplete) {
        const room = headCap - head.length;
        head += text.slice(0, room);
        if (head.length >= headCap) headComplete = true;
        if (text.length > room) sawEverything = false;
      } else {
        sawEverything = false;
      }
      keepTail(text);
    },
    tail() {
      return cleanOutput(tailParts.join('').slice(-limits.tailBytes));
    },
    finish(artifactHandle) {
      const budget = limits.headBytes + limits.tailBytes;
      if (sawEverything) {
        const whole = cleanOutput(head);
        if (Buffer.byteLength(whole, 'utf8') <= budget) return { text: whole, truncated: false, bytes };
        return assemble(whole, whole, limits, bytes, artifactHandle);
      }
      return assemble(
        cleanOutput(head),
        cleanOutput(tailParts.join('').slice(-tailCap)),
        limits,
        bytes,
        artifactHandle,
      );
    },
  };
}

function assemble(head: string, tail: string, limits: ExcerptLimits, bytes: number, handle: string): Excerpt {
  const first = takeHead(head, limits.headBytes);
  const last = takeTail(tail, limits.tailBytes);
  const shown = Buffer.byteLength(first, 'utf8') + Buffer.byteLength(last, 'utf8');
  const omitted = Math.max(0, bytes - shown);
  const separator = first.endsWith('\n') ? '' : '\n';
  // Issue #37: where the rest is, as the reader can name it (the model reads `/artifacts/…` with its tools).
  const text = `${first}${separator}[... ${omitted} bytes left out here; the whole output is in ${handle}]\n${last}`;
  return { text, truncated: true, bytes };
}

/**
 * What the model should see of terminal output: escape sequences and control characters removed, CRLF as
 * LF, and for lines redrawn with a bare CR (progress bars) only the final state.
 */
export function cleanOutput(text: string): string {
  const stripped = stripVTControlCharacters(text).replace(/\r+\n/g, '\n');
  const lines = stripped.split('\n').map((line) => {
    const redraw = line.lastIndexOf('\r', line.length - 2);
    const visible = redraw >= 0 ? line.slice(redraw + 1) : line;
    // eslint-disable-next-line no-control-regex -- removing control characters is the point
    return visible.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
  });
  return lines.join('\n');
}

/** The longest prefix of at most `maxBytes` UTF-8 bytes, ending at a line break when one is near the end. */
function takeHead(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  const cut = buffer.subarray(0, end).toString('utf8');
  const newline = cut.lastIndexOf('\n');
  return newline >= cut.length / 2 ? cut.slice(0, newline + 1) : cut;
}

/** The longest suffix of at most `maxBytes` UTF-8 bytes, starting after a line break when one is near the start. */
function takeTail(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= maxBytes) return text;
  let start = buffer.length - maxBytes;
  while (start < buffer.length && ((buffer[start] ?? 0) & 0xc0) === 0x80) start += 1;
  const cut = buffer.subarray(start).toString('utf8');
  const newline = cut.indexOf('\n');
  return newline >= 0 && newline < cut.length / 2 ? cut.slice(newline + 1) : cut;
}

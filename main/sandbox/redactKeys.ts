// Detectors that need more than one regular expression: the base64 body lines of a PEM private key (seen
// without its BEGIN line, or one line at a time), and values under secret-looking names in JSON, INI,
// YAML and shell syntax. Used by redact.ts.

/** A secret found in text: [start, end) and the label it is replaced with. */
export interface KeySpan {
  start: number;
  end: number;
  label: string;
  /** The characters that may continue this match in text not seen yet. */
  continuation?: RegExp;
  /** A PEM body line: the line after it may be the block's last (shorter) line. */
  keyBody?: boolean;
}

// PEM bodies are 64 base64 characters a line (RFC 7468), OpenSSH's 70. A maximal run of exactly that
// length, standing alone between characters that are not base64, is a body line.
const BODY_RUN = /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{62,70}={0,2}(?![A-Za-z0-9+/=])/g;
const BODY_LENGTHS = new Set([64, 70]);
// The line after a body line: a shorter base64 run (the block's last line), after the same kind of
// prefix a numbered or grepped listing puts there (`     3\t`, `file:3:`, indentation, a quote).
const LAST_LINE =
  /^={0,2}(?:\\n|\r?\n)[^\S\n]*(?:[^\s:]{0,256}:)?(?:\d{1,9}[\t:])?[ \t"']*([A-Za-z0-9+/]{1,69}={0,2})(?![A-Za-z0-9+/=])/;

// A body line or a block's last line cut by a flush may go on in the next text.
const KEY_LINE_CONTINUATION = /^[A-Za-z0-9+/=]+/;

/**
 * True while `gap`, the text released since a body line, may still be followed by the block's last line:
 * at most one line break (also `\n`-escaped) and no longer than the prefix LAST_LINE allows.
 */
export function mayPrecedeLastKeyLine(gap: string): boolean {
  return gap.length <= 512 && (gap.match(/\\n|\n/g)?.length ?? 0) <= 1;
}

/** True when `run` looks like random base64 (upper and lower case and a digit), not a word or a hash. */
function looksRandom(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /\d/.test(run);
}

/**
 * Body lines of PEM private keys: every base64 run of exactly 64 or 70 characters (mixed case and
 * digits), plus the shorter run on the line right after one (the block's last line). `afterBody` is the
 * text released since a body line when `text` continues it (a key printed one line at a time), however
 * the release cut it: the line break may have gone out with the body line, alone, or split `\r` | `\n`.
 */
export function findKeyBodySpans(text: string, spans: KeySpan[], afterBody?: string): void {
  if (afterBody !== undefined) {
    const last = LAST_LINE.exec(afterBody + text.slice(0, 512));
    // A whole body line there is found (and flagged) below; a run begun in `afterBody` is not the last line.
    if (last?.[1] !== undefined && !BODY_LENGTHS.has(last[1].length)) {
      const end = last[0].length - afterBody.length;
      const start = end - last[1].length;
      if (start >= 0) spans.push({ start, end, label: 'private-key', continuation: KEY_LINE_CONTINUATION });
    }
  }
  BODY_RUN.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = BODY_RUN.exec(text)) !== null) {
    const run = match[0];
    if (!BODY_LENGTHS.has(run.length) || !looksRandom(run)) continue;
    const end = match.index + run.length;
    spans.push({
      start: match.index,
      end,
      label: 'private-key',
      keyBody: true,
      continuation: KEY_LINE_CONTINUATION,
    });
    const last = LAST_LINE.exec(text.slice(end, end + 512));
    if (last?.[1] !== undefined) {
      const tailEnd = end + last[0].length;
      spans.push({
        start: tailEnd - last[1].length,
        end: tailEnd,
        label: 'private-key',
        continuation: KEY_LINE_CONTINUATION,
      });
    }
  }
}

// `name: value`, `name = value`, `"name": "value"`, `name="value"`: the name is tested by isSecretName.
// Found from the words secret names contain, so ordinary text costs one literal scan.
const NAME_WORD = /key|token|secret|pass|pwd|credential|auth|private|cookie|signature/gi;
const NAME_CHAR = /[A-Za-z0-9_.-]/;
const AFTER_NAME = /["']?[ \t]*[:=][ \t]*["']?([^\s"'`,;&<>(){}[\]]{8,1024})/dy;
const VALUE_CHARS = /^[^\s"'`,;&<>(){}[\]]+/;

/** Options of findNamedValueSpans: the rules redact.ts already has for names and values. */
export interface NamedValueRules {
  isSecretName(name: string): boolean;
  isPlaceholder(value: string): boolean;
  isBenign(value: string): boolean;
}

/**
 * Values under secret-looking names (`aws_secret_access_key = …` in ~/.aws/credentials, `"password":
 * "…"` in JSON, `api_key: …` in YAML), 8 characters or more, not placeholders or plain configuration,
 * and with a digit or a symbol unless 20 characters or longer (so `sortKey: createdAt` stays).
 */
export function findNamedValueSpans(text: string, spans: KeySpan[], rules: NamedValueRules): void {
  NAME_WORD.lastIndex = 0;
  let word: RegExpExecArray | null;
  while ((word = NAME_WORD.exec(text)) !== null) {
    let start = word.index;
    while (start > 0 && word.index - start < 64 && NAME_CHAR.test(text[start - 1] ?? '')) start -= 1;
    let end = NAME_WORD.lastIndex;
    while (end < text.length && end - start < 64 && NAME_CHAR.test(text[end] ?? '')) end += 1;
    NAME_WORD.lastIndex = end;
    const name = text.slice(start, end);
    if (!/^[A-Za-z_]/.test(name) || !rules.isSecretName(name.replace(/[.-]/g, '_'))) continue;
    AFTER_NAME.lastIndex = end;
    const match = AFTER_NAME.exec(text);
    const value = match?.[1];
    const range = match?.indices?.[1];
    if (value === undefined || range === undefined) continue;
    NAME_WORD.lastIndex = range[1];
    if (rules.isPlaceholder(value) || rules.isBenign(value)) continue;
    if (value.length < 20 && !/[\d/+=_-]/.test(value)) continue;
    spans.push({
      start: range[0],
      end: range[1],
      label: name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64),
      continuation: VALUE_CHARS,
    });
  }
}

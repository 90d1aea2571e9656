// The words bash makes of a command line that a prefix grant may match: only for lines with no shell control
// (no ; & | $ ( ) < > backquote, backslash or line break, refused before this runs), so what is left is
// words, quotes and the expansions bash still does without those characters (globs, braces, a tilde).

/** One word of a command line as bash passes it to the program, and whether bash may still rewrite it. */
export type ShellWord = {
  /** The word with its quotes removed. */
  text: string;
  /**
   * True when an unquoted glob (`*`, `?`, `[`) or brace expansion (`{a,b}`, `{1..3}`) may turn the word into
   * other words (file names: a file can be named `-exec`), so its text is not what the program gets.
   */
  expands: boolean;
};

const BLANK = /[ \t]/;

/**
 * Splits `line` into the words bash would pass (quotes removed; `#` at a word's start ends the line), or
 * undefined when a quote is not closed. Pure. Assumes no shell control characters (see the file comment).
 */
export function shellWords(line: string): ShellWord[] | undefined {
  const words: ShellWord[] = [];
  let text = '';
  let unquoted = '';
  let inWord = false;
  let index = 0;
  const end = () => {
    if (inWord) words.push({ text, expands: mayExpand(unquoted) });
    text = '';
    unquoted = '';
    inWord = false;
  };
  while (index < line.length) {
    const char = line[index] as string;
    if (BLANK.test(char)) {
      end();
      index += 1;
      continue;
    }
    if (char === '#' && !inWord) break;
    if (char === "'" || char === '"') {
      const close = line.indexOf(char, index + 1);
      if (close < 0) return undefined;
      text += line.slice(index + 1, close);
      // A quoted stretch never expands; a placeholder keeps `{a,'b'}`-style braces from looking plain.
      unquoted += ' ';
      inWord = true;
      index = close + 1;
      continue;
    }
    text += char;
    unquoted += char;
    inWord = true;
    index += 1;
  }
  end();
  return words;
}

/** Whether the unquoted characters of a word hold a glob or a brace expansion bash would perform. */
function mayExpand(unquoted: string): boolean {
  if (/[*?[]/.test(unquoted)) return true;
  // Brace expansion needs a `{` with a `,` or `..` before its `}`; `{}` alone (find's placeholder) stays.
  return /\{[^}]*(,|\.\.)[^}]*\}/.test(unquoted);
}

// Reading a sed script far enough to tell whether it runs a command or writes a file (commandFlags.ts asks,
// for a prefix grant of sed). Pure.

const RUNS = 'runs a command';
const WRITES = 'writes a file';

/**
 * Why a sed script (no `;`, line breaks or backslashes: the shell-control rule refused those) may run a
 * command or write a file: the `e` command or `s///e` (runs), `w`/`W` or `s///w` (writes), or a construct
 * this reader does not know (then it says so rather than guess).
 */
export function sedScriptProblem(script: string): string | undefined {
  let at = 0;
  const skipBlanks = () => {
    while (at < script.length && /[ \t;]/.test(script[at] as string)) at += 1;
  };
  const address = (): boolean => {
    if (/[0-9]/.test(script[at] ?? '')) {
      while (/[0-9~]/.test(script[at] ?? '')) at += 1;
      return true;
    }
    if (script[at] === '/') {
      const end = regexEnd(script, at + 1, '/');
      if (end < 0) return false;
      at = end + 1;
      while (/[IM]/.test(script[at] ?? '')) at += 1;
    }
    return true;
  };
  for (;;) {
    skipBlanks();
    if (at >= script.length) return undefined;
    if (!address()) return 'its script has an address Keel cannot read';
    if (script[at] === ',') {
      at += 1;
      if (/[+~]/.test(script[at] ?? '')) at += 1;
      if (!address()) return 'its script has an address Keel cannot read';
    }
    while (/[ \t!]/.test(script[at] ?? '')) at += 1;
    const command = script[at];
    at += 1;
    switch (command) {
      case '{':
      case '}':
        continue;
      case 's': {
        const delimiter = script[at];
        if (delimiter === undefined) return 'its s command is cut short';
        const patternEnd = regexEnd(script, at + 1, delimiter);
        const replacementEnd = patternEnd < 0 ? -1 : script.indexOf(delimiter, patternEnd + 1);
        if (replacementEnd < 0) return 'its s command is cut short';
        at = replacementEnd + 1;
        while (at < script.length && /[gpiImMe0-9w]/.test(script[at] as string)) {
          if (script[at] === 'e') return 'its s command has the e flag, which runs the result as a command';
          if (script[at] === 'w') return `its s command has the w flag, which ${WRITES}`;
          at += 1;
        }
        continue;
      }
      case 'y': {
        const delimiter = script[at];
        const first = delimiter === undefined ? -1 : script.indexOf(delimiter, at + 1);
        const second = first < 0 || delimiter === undefined ? -1 : script.indexOf(delimiter, first + 1);
        if (second < 0) return 'its y command is cut short';
        at = second + 1;
        continue;
      }
      case 'e':
        return `its e command ${RUNS}`;
      case 'w':
      case 'W':
        return `its ${command} command ${WRITES}`;
      case 'r':
      case 'R':
      case 'a':
      case 'i':
      case 'c':
      case 'b':
      case 't':
      case 'T':
      case ':':
        // The rest of the script is a file name to read, text, or a label: nothing runs or is written.
        return undefined;
      default:
        if (command !== undefined && 'pPdDnNgGhHxl=zFqQL'.includes(command)) {
          while (/[0-9]/.test(script[at] ?? '')) at += 1;
          continue;
        }
        return `its script has ${command === undefined ? 'an address without a command' : `a ${command} command Keel does not read`}`;
    }
  }
}

/** Where a regular expression starting at `from` ends (the index of `delimiter`), brackets read as sed does. */
function regexEnd(script: string, from: number, delimiter: string): number {
  let at = from;
  while (at < script.length) {
    const char = script[at] as string;
    if (char === delimiter) return at;
    if (char === '[') {
      at += 1;
      if (script[at] === '^') at += 1;
      if (script[at] === ']') at += 1;
      while (at < script.length && script[at] !== ']') {
        const kind = script[at + 1] ?? '';
        if (script[at] === '[' && ':=.'.includes(kind) && kind !== '') {
          const close = script.indexOf(`${kind}]`, at + 2);
          if (close < 0) return -1;
          at = close + 2;
        } else at += 1;
      }
    }
    at += 1;
  }
  return -1;
}

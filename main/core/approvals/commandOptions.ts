// Reading a command's options the way its own parser does (getopt's bundles, values, `--`, GNU long-name
// abbreviations), so commandFlags.ts can say which of them a prefix grant does not cover. Pure.
import type { ShellWord } from './shellWords.js';

/** How one program reads its options, as far as a prefix grant needs to know. */
export type OptionSpec = {
  /** Short letters outside any grant that does not name them, each with why. */
  outsideShort?: Readonly<Record<string, string>>;
  /** Long names (without `--`) outside any grant that does not name them; an abbreviation of one counts. */
  outsideLong?: Readonly<Record<string, string>>;
  /** Short letters whose value is the rest of their word, or the next word when nothing follows. */
  shortValue?: string;
  /** Short letters whose value is only the rest of their word (an optional value). */
  shortOptionalValue?: string;
  /** Short letters that take no value. With `lenient` unset, a letter in none of these lists is outside. */
  shortFlags?: string;
  /** Long names taking the next word as their value when written without `=`. */
  longValue?: readonly string[];
  /** Long names taking no value (or only `=value`). With `lenient` unset, any other long name is outside. */
  longFlags?: readonly string[];
  /** Options end at the first operand (POSIX getopt with `+`, interpreters); else they may follow operands. */
  stopAtOperand?: boolean;
  /**
   * The program has more options than are worth listing (npm's configuration, node's V8 flags): unknown
   * options are allowed, every letter of a bundle is still checked against `outsideShort`, and an unknown
   * option's value is taken to be in its own word (so a value that looks like an option is checked too).
   */
  lenient?: boolean;
};

/** The value of an option, where it stands. */
export type OptionValue = { option: string; text: string; index: number; expands: boolean };

/** What reading the options found: why a word is outside the grant (or undefined), operands, values. */
export type ScannedOptions = { outside?: string; operands: number[]; values: OptionValue[] };

/**
 * Reads `words[start..]` as options of a program with `spec`. Only words at `approved` or after (those the
 * grant's prefix did not name) can be outside it. A word the shell may expand (a glob, braces) that could
 * become an option is outside too: a file named `-exec` turns `-ex*` into `-exec`.
 */
export function scanOptions(
  words: readonly ShellWord[],
  start: number,
  approved: number,
  spec: OptionSpec,
): ScannedOptions {
  const result: ScannedOptions = { operands: [], values: [] };
  const outside = (index: number, why: string): ScannedOptions => {
    if (index >= approved) result.outside = why;
    return result;
  };
  let operandsOnly = false;
  for (let index = start; index < words.length; index += 1) {
    const word = words[index] as ShellWord;
    if (operandsOnly) {
      result.operands.push(index);
      continue;
    }
    if (word.text === '--') {
      operandsOnly = true;
      continue;
    }
    if (word.expands && mayBecomeOption(word.text) && index >= approved) {
      return outside(
        index,
        `the shell may expand ${word.text} into an option (a file can be named like one)`,
      );
    }
    if (word.text.startsWith('--')) {
      const equals = word.text.indexOf('=');
      const name = word.text.slice(2, equals < 0 ? undefined : equals);
      const why = abbreviationOf(name, spec.outsideLong ?? {});
      if (why !== undefined && index >= approved) return outside(index, `--${name} ${why}`);
      const takesValue = spec.longValue?.includes(name) === true;
      const known = takesValue || why !== undefined || spec.longFlags?.includes(name) === true;
      if (!known && spec.lenient !== true) {
        return outside(index, `--${name} is an option Keel does not know for this command`);
      }
      if (takesValue) {
        if (equals >= 0) {
          result.values.push({
            option: name,
            text: word.text.slice(equals + 1),
            index,
            expands: word.expands,
          });
        } else if (index + 1 < words.length) {
          // An option the prefix names whose value it does not (`prefix:git --git-dir`): outside too.
          if (why !== undefined && index + 1 >= approved) {
            return outside(index + 1, `the value of --${name} (which ${why}) is not named by the grant`);
          }
          const next = words[index + 1] as ShellWord;
          result.values.push({ option: name, text: next.text, index: index + 1, expands: next.expands });
          index += 1;
        }
      }
      continue;
    }
    if (word.text.startsWith('-') && word.text.length > 1) {
      const scanned = scanShortBundle(words, index, approved, spec, result);
      if (typeof scanned !== 'number') return outside(scanned.at, scanned.why);
      index = scanned;
      continue;
    }
    result.operands.push(index);
    if (spec.stopAtOperand === true) operandsOnly = true;
  }
  return result;
}

/**
 * Reads one `-abc` word; returns the index of its last word (a value may be the next one), or why it is
 * outside and the word that decides it (outside only when that word is past the prefix).
 */
function scanShortBundle(
  words: readonly ShellWord[],
  index: number,
  approved: number,
  spec: OptionSpec,
  result: ScannedOptions,
): number | { at: number; why: string } {
  const word = words[index] as ShellWord;
  for (let at = 1; at < word.text.length; at += 1) {
    const letter = word.text[at] as string;
    const why = spec.outsideShort?.[letter];
    if (why !== undefined && index >= approved) return { at: index, why: `-${letter} ${why}` };
    const rest = word.text.slice(at + 1);
    if (spec.shortValue?.includes(letter) === true) {
      if (rest !== '') {
        result.values.push({ option: letter, text: rest, index, expands: word.expands });
        return index;
      }
      const next = words[index + 1];
      if (next === undefined) return index;
      // An option the prefix names whose value it does not (`prefix:git -c`, `prefix:perl -e`): outside too.
      if (why !== undefined && index + 1 >= approved) {
        return { at: index + 1, why: `the value of -${letter} (which ${why}) is not named by the grant` };
      }
      result.values.push({ option: letter, text: next.text, index: index + 1, expands: next.expands });
      return index + 1;
    }
    if (spec.shortOptionalValue?.includes(letter) === true) {
      if (rest !== '') result.values.push({ option: letter, text: rest, index, expands: word.expands });
      return index;
    }
    if (spec.shortFlags?.includes(letter) === true || why !== undefined) continue;
    if (spec.lenient !== true) {
      return { at: index, why: `-${letter} is an option Keel does not know for this command` };
    }
    // Lenient: the letter may take the rest as its value; the remaining letters are still checked above.
  }
  return index;
}

/** The reason of the outside long name that `name` is (or abbreviates, as GNU getopt and npm accept). */
function abbreviationOf(name: string, outside: Readonly<Record<string, string>>): string | undefined {
  if (name === '') return undefined;
  for (const [full, why] of Object.entries(outside)) if (full.startsWith(name)) return why;
  return undefined;
}

/** Whether a word bash expands could start with `-` once expanded. */
function mayBecomeOption(text: string): boolean {
  return /^[-*?[{]/.test(text);
}

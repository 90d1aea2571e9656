/*
 * What the composer's menus complete (pure, unit-tested): a `/command` typed as the prompt's first word, or an
 * `@mention` ending at the caret; and the text after choosing an entry.
 */

/** The word being completed: its kind, what was typed after the sign, and where it sits in the text. */
export type Trigger = { kind: 'command' | 'mention'; query: string; start: number; end: number };

/** The `/` or `@` word the caret is in, if any. */
export function triggerAt(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  // A command is the prompt's first word: "/comp" at the very start, caret inside it.
  const command = /^\/([a-z0-9:_-]*)$/i.exec(before);
  if (command) return { kind: 'command', query: command[1] ?? '', start: 0, end: caret };
  // A mention starts after a space or the start of a line; it holds no spaces.
  const mention = /(^|\s)@([^\s@]*)$/.exec(before);
  if (mention) {
    const query = mention[2] ?? '';
    return { kind: 'mention', query, start: caret - query.length - 1, end: caret };
  }
  return undefined;
}

/** The text with the trigger's word replaced by `replacement` and a space after it; the new caret. */
export function applyCompletion(
  text: string,
  trigger: Trigger,
  replacement: string,
): { text: string; caret: number } {
  const after = text.slice(trigger.end);
  // A folder keeps the menu open to go on into it: no space after `src/`.
  const space = replacement.endsWith('/') || after.startsWith(' ') ? '' : ' ';
  const next = `${text.slice(0, trigger.start)}${replacement}${space}${after}`;
  return { text: next, caret: trigger.start + replacement.length + space.length };
}

/** A `/name rest` prompt split into the command's name and what follows it, when it names a command. */
export function parseCommand(
  text: string,
  names: ReadonlySet<string>,
): { name: string; argument: string } | undefined {
  const match = /^\/([a-z0-9:_-]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match?.[1] || !names.has(match[1].toLowerCase())) return undefined;
  return { name: match[1].toLowerCase(), argument: (match[2] ?? '').trim() };
}

/**
 * Prompt history (↑/↓): the previous prompts, oldest first; `index` counts back from the newest (-1: the draft
 * being written). Returns the next index and the text to show, or undefined when there is nowhere to go.
 */
export function stepHistory(
  prompts: readonly string[],
  index: number,
  direction: 'back' | 'forward',
  draft: string,
): { index: number; text: string } | undefined {
  const next = direction === 'back' ? index + 1 : index - 1;
  if (next < -1 || next >= prompts.length) return undefined;
  if (next === -1) return { index: -1, text: draft };
  const text = prompts[prompts.length - 1 - next];
  return text === undefined ? undefined : { index: next, text };
}

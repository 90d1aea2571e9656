/*
 * Issue #37: the app's keyboard shortcuts, listed once: the `?` sheet and the empty pane show this list.
 * Pure, no React.
 */

/** One shortcut: its keys (each a <kbd>; `or` alternatives) and what it does. */
export type Shortcut = { keys: readonly (readonly string[])[]; what: string };

export const SHORTCUTS: readonly Shortcut[] = [
  {
    keys: [
      ['Ctrl', 'K'],
      ['⌘', 'K'],
    ],
    what: 'Command palette: jump to a session, new session, settings, theme',
  },
  { keys: [['?']], what: 'This list of shortcuts (outside a text field)' },
  { keys: [['↑'], ['↓'], ['Enter']], what: 'Move through the session list and open a session' },
  { keys: [['Enter'], ['Shift', 'Enter']], what: 'Send / new line in the message box' },
  { keys: [['/']], what: 'Commands, in the message box' },
  { keys: [['@']], what: 'Mention a file or folder, in the message box' },
  { keys: [['Esc']], what: 'Stop the running turn; close a dialog' },
];

/** Whether a key typed at `target` is text being written (an input, a text area, an editor), not a shortcut. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) {
    // A checkbox or a button-like input takes no text: `?` there is still the shortcut.
    return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(
      target.type,
    );
  }
  // xterm.js and Monaco type through a hidden textarea (caught above) inside these.
  return target.closest('.xterm, .monaco-editor') !== null;
}

/** The entries a palette query keeps: every word of the query is in the label (any order, any case). */
export function matchesQuery(label: string, query: string): boolean {
  const text = label.toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => text.includes(word));
}

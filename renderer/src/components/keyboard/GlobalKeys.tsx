import { useEffect, useRef, useState, type JSX } from 'react';
import { CommandPalette } from './CommandPalette.js';
import { isTypingTarget } from './shortcuts.js';
import { ShortcutsList } from './ShortcutsList.js';

/** The `?` sheet: every shortcut, closed by Esc or its button. */
function ShortcutsSheet({ onClose }: { onClose: () => void }): JSX.Element {
  const dialogRef = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={dialogRef}
      className="dialog shortcuts-sheet"
      aria-labelledby="shortcuts-title"
      onClose={onClose}
    >
      <div className="form">
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <ShortcutsList />
        <div className="dialog-actions">
          <button
            type="button"
            className="button-secondary"
            autoFocus
            onClick={() => dialogRef.current?.close()}
          >
            Close
          </button>
        </div>
      </div>
    </dialog>
  );
}

/**
 * Issue #37: the app-wide keys. Ctrl/Cmd+K opens the command palette anywhere (also in a text field, as in
 * editors; not in a terminal); `?` opens the shortcuts sheet outside a text field. Neither opens over another dialog.
 */
export function GlobalKeys(): JSX.Element | null {
  const [open, setOpen] = useState<'palette' | 'shortcuts' | undefined>();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || document.querySelector('dialog[open]')) return;
      // A terminal keeps its Ctrl+K (the shell's kill-line).
      const inTerminal = event.target instanceof Element && event.target.closest('.xterm') !== null;
      const palette =
        (event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'k' && !inTerminal;
      const sheet = event.key === '?' && !event.ctrlKey && !event.metaKey && !event.altKey;
      if (palette || (sheet && !isTypingTarget(event.target))) {
        event.preventDefault();
        setOpen(palette ? 'palette' : 'shortcuts');
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  if (open === 'palette')
    return <CommandPalette onClose={() => setOpen(undefined)} onShortcuts={() => setOpen('shortcuts')} />;
  if (open === 'shortcuts') return <ShortcutsSheet onClose={() => setOpen(undefined)} />;
  return null;
}

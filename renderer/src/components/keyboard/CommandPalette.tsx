import { useEffect, useMemo, useRef, useState, type JSX, type KeyboardEvent } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { useApp } from '../../appContext.js';
import { THEMES, useSaveTheme } from '../ThemeChoice.js';
import { matchesQuery } from './shortcuts.js';

type Command = { id: string; label: string; hint?: string; run: () => void | Promise<unknown> };

/**
 * Issue #37: Ctrl/Cmd+K. One field over every command (new session, settings, search, theme, shortcuts) and
 * the recent sessions to jump to; ↑/↓ choose, Enter runs, Esc closes.
 */
export function CommandPalette({
  onClose,
  onShortcuts,
}: {
  onClose: () => void;
  onShortcuts: () => void;
}): JSX.Element {
  const { navigate, openNewSession, focusSearch } = useApp();
  const saveTheme = useSaveTheme();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const sessions = useQuery(() => call(keel().sessions.list({ limit: 50 })), []);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);

  const commands = useMemo<Command[]>(() => {
    const fixed: Command[] = [
      { id: 'new', label: 'New session', run: () => openNewSession() },
      { id: 'settings', label: 'Open settings', run: () => navigate({ screen: 'settings' }) },
      { id: 'search', label: 'Search sessions', run: focusSearch },
      { id: 'shortcuts', label: 'Keyboard shortcuts', run: onShortcuts },
      ...THEMES.map((theme) => ({
        id: `theme-${theme.value}`,
        label: `Theme: ${theme.label}`,
        run: () => saveTheme(theme.value),
      })),
    ];
    const jumps = (sessions.data?.sessions ?? []).map((session) => ({
      id: `session-${session.id}`,
      label: `Go to session: ${session.title ?? session.id}`,
      hint: session.projectFolder,
      run: () => navigate({ screen: 'session', sessionId: session.id }),
    }));
    return [...fixed, ...jumps].filter((command) => matchesQuery(command.label, query));
  }, [sessions.data, query, navigate, openNewSession, focusSearch, onShortcuts, saveTheme]);

  const chosen = Math.min(active, Math.max(commands.length - 1, 0));
  // Runs once the dialog has closed: a command that opens a dialog or moves focus keeps it.
  const pending = useRef<Command | undefined>(undefined);
  const run = (command: Command | undefined) => {
    if (!command) return;
    pending.current = command;
    dialogRef.current?.close();
  };
  const closed = () => {
    onClose();
    void pending.current?.run();
  };

  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((chosen + step + commands.length) % Math.max(commands.length, 1));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      run(commands[chosen]);
    }
  };

  return (
    <dialog ref={dialogRef} className="dialog palette" aria-label="Command palette" onClose={closed}>
      <input
        className="palette-input"
        role="combobox"
        aria-label="Command"
        aria-expanded="true"
        aria-controls="palette-list"
        aria-activedescendant={commands[chosen] ? `palette-${commands[chosen].id}` : undefined}
        placeholder="Type a command or a session’s title…"
        value={query}
        autoFocus
        spellCheck={false}
        onChange={(event) => {
          setQuery(event.target.value);
          setActive(0);
        }}
        onKeyDown={onKey}
      />
      <ul id="palette-list" role="listbox" aria-label="Commands" className="palette-list">
        {commands.map((command, index) => (
          <li
            key={command.id}
            id={`palette-${command.id}`}
            role="option"
            aria-selected={index === chosen}
            className={index === chosen ? 'is-active' : undefined}
            onMouseEnter={() => setActive(index)}
            onClick={() => run(command)}
          >
            <span>{command.label}</span>
            {command.hint ? <span className="palette-hint">{command.hint}</span> : null}
          </li>
        ))}
        {commands.length === 0 ? <li className="palette-empty">Nothing matches “{query}”.</li> : null}
      </ul>
    </dialog>
  );
}

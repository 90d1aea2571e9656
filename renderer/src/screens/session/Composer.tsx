import {
  useEffect,
  useMemo,
  useRef,
  useState,
  type FormEvent,
  type JSX,
  type KeyboardEvent,
  type ReactNode,
  type RefObject,
} from 'react';
import { PROMPT_MAX_CHARS, type Mention, type SlashCommand } from '../../../../main/ipc/contract.js';
import { ComposerMenu, type MenuEntry } from './composer/ComposerMenu.js';
import {
  applyCompletion,
  parseCommand,
  stepHistory,
  triggerAt,
  type Trigger,
} from './composer/composerTokens.js';
import './composer/composer.css';
import { AttachButton, AttachmentTray } from './attachments/AttachmentTray.js';
import { useAttachments, type SendFiles } from './attachments/useAttachments.js';

type Props = {
  inputRef: RefObject<HTMLTextAreaElement | null>;
  running: boolean;
  readOnly: boolean;
  /** Why the session is read-only, when the generic sentence would mislead (a subagent run by its parent). */
  readOnlyHint?: string;
  canResume: boolean;
  awaitingApproval: boolean;
  busy: boolean;
  error: string | undefined;
  onSend: (prompt: string, files: SendFiles) => Promise<boolean>;
  /** The pinned model (issue #32: the tray says what it will not see). */
  model?: { provider: string; model: string };
  onStop: () => void;
  onResume: () => void;
  /** The session's earlier prompts, oldest first: ↑ and ↓ bring them back. */
  history?: readonly string[];
  /** Text put back in the box to edit (Rewind to here): each new `id` replaces what the box holds. */
  draft?: { text: string; id: number } | undefined;
  /** The `/` menu (commands.list). */
  commands?: readonly SlashCommand[];
  /** Runs one of Keel's own commands; others are sent as the prompt (they expand in main). */
  onCommand?: (name: string, argument: string) => void;
  /** The `@` menu: the project's files and folders matching what was typed (mentions.complete). */
  completeMentions?: (query: string) => Promise<readonly Mention[]>;
  /** A control shown beside Attach (plan mode's toggle): in the row, so it costs the window no height. */
  modeControl?: ReactNode;
};

type Menu = { trigger: Trigger; entries: MenuEntry[]; values: string[]; commands?: SlashCommand[] };

const MENU_ID = 'composer-menu';

/**
 * The prompt box: Send (Enter; Shift+Enter for a new line), Stop while a turn runs (also Esc), Resume after an
 * interruption. It grows with its text up to a limit (CSS), offers `/` commands and `@` mentions in a menu,
 * brings earlier prompts back with ↑/↓, and refuses a prompt too large to carry before anything is sent.
 */
export function Composer({
  inputRef,
  running,
  readOnly,
  readOnlyHint,
  canResume,
  awaitingApproval,
  busy,
  error,
  onSend,
  onStop,
  onResume,
  model,
  history = [],
  draft,
  commands = [],
  onCommand,
  completeMentions,
  modeControl,
}: Props): JSX.Element {
  const [prompt, setPrompt] = useState('');
  const [caret, setCaret] = useState(0);
  const [menuClosedAt, setMenuClosedAt] = useState<string | undefined>();
  const [active, setActive] = useState(0);
  const [mentions, setMentions] = useState<{ query: string; found: readonly Mention[] } | undefined>();
  const [localError, setLocalError] = useState<string | undefined>();
  // ↑/↓: how far back in the history the box is (-1: the draft), and the draft kept meanwhile.
  const historyIndex = useRef(-1);
  const savedDraft = useRef('');
  const blocked = readOnly || running || awaitingApproval;
  const files = useAttachments(!readOnly);

  useEffect(() => {
    if (!draft) return;
    setPrompt(draft.text);
    historyIndex.current = -1;
    const input = inputRef.current;
    if (input) {
      input.focus();
      // After React wrote the value: the caret at its end.
      requestAnimationFrame(() => input.setSelectionRange(draft.text.length, draft.text.length));
    }
  }, [draft, inputRef]);

  const trigger = useMemo(() => triggerAt(prompt, caret), [prompt, caret]);
  const mentionQuery = trigger?.kind === 'mention' ? trigger.query : undefined;
  useEffect(() => {
    if (mentionQuery === undefined || !completeMentions) return;
    let live = true;
    const timer = setTimeout(() => {
      completeMentions(mentionQuery).then(
        (found) => live && setMentions({ query: mentionQuery, found }),
        () => live && setMentions({ query: mentionQuery, found: [] }),
      );
    }, 80);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [mentionQuery, completeMentions]);

  const menu = useMemo<Menu | undefined>(() => {
    if (!trigger || menuClosedAt === prompt) return undefined;
    if (trigger.kind === 'command') {
      const query = trigger.query.toLowerCase();
      const matching = commands.filter((command) => command.name.startsWith(query));
      return {
        trigger,
        commands: matching,
        values: matching.map((command) => `/${command.name}`),
        entries: matching.map((command) => ({
          key: command.name,
          label: `/${command.name}${command.argument ? ` ${command.argument}` : ''}`,
          detail: command.description,
          tag: command.source === 'keel' ? undefined : command.source === 'mcp' ? 'MCP' : command.source,
        })),
      };
    }
    if (!completeMentions || mentions === undefined || mentions.query !== trigger.query) return undefined;
    return {
      trigger,
      values: mentions.found.map((mention) => `@${mention.path}`),
      entries: mentions.found.map((mention) => ({
        key: mention.path,
        label: mention.path,
        // An MCP resource (`mcp:server:uri`): its title beside it, tagged MCP; its contents go with the message.
        detail:
          mention.kind === 'folder' ? 'folder' : mention.kind === 'resource' ? mention.title : undefined,
        tag: mention.kind === 'resource' ? 'MCP' : undefined,
      })),
    };
  }, [trigger, menuClosedAt, prompt, commands, completeMentions, mentions]);
  const activeIndex = menu ? Math.min(active, Math.max(0, menu.entries.length - 1)) : 0;

  const setText = (text: string, nextCaret = text.length) => {
    setPrompt(text);
    setCaret(nextCaret);
    setLocalError(undefined);
    requestAnimationFrame(() => inputRef.current?.setSelectionRange(nextCaret, nextCaret));
  };

  const runCommand = (name: string, argument: string) => {
    onCommand?.(name, argument);
    setText('');
    historyIndex.current = -1;
  };

  const choose = (index: number) => {
    if (!menu) return;
    const value = menu.values[index];
    if (value === undefined) return;
    const command = menu.commands?.[index];
    setActive(0);
    if (command?.source === 'keel' && !command.argument) {
      runCommand(command.name, '');
      return;
    }
    const next = applyCompletion(prompt, menu.trigger, value);
    setText(next.text, next.caret);
  };

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = prompt.trim();
    if (!text || busy) return;
    const keelNames = new Set(commands.filter((c) => c.source === 'keel').map((c) => c.name));
    const command = parseCommand(text, keelNames);
    if (command && onCommand) {
      runCommand(command.name, command.argument);
      return;
    }
    if (blocked) return;
    if (text.length > PROMPT_MAX_CHARS) {
      setLocalError(
        `This message is ${megabytes(text.length)} MB; one message can carry at most ${megabytes(PROMPT_MAX_CHARS)} MB. ` +
          'Nothing was sent: put the text in a file in the project and ask the model to read it.',
      );
      return;
    }
    if (await onSend(text, files.forSend())) {
      setText('');
      files.clear();
      historyIndex.current = -1;
    }
  };

  const recall = (direction: 'back' | 'forward'): boolean => {
    const input = inputRef.current;
    if (!input || history.length === 0) return false;
    const before = prompt.slice(0, input.selectionStart);
    const after = prompt.slice(input.selectionEnd);
    // Only from the first line going back, the last line going forward: elsewhere the arrows move the caret.
    if (direction === 'back' ? before.includes('\n') : after.includes('\n')) return false;
    if (historyIndex.current === -1) savedDraft.current = prompt;
    const step = stepHistory(history, historyIndex.current, direction, savedDraft.current);
    if (!step) return false;
    historyIndex.current = step.index;
    setText(step.text);
    return true;
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.nativeEvent.isComposing) return;
    if (menu && menu.entries.length > 0) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const step = event.key === 'ArrowDown' ? 1 : -1;
        setActive((activeIndex + step + menu.entries.length) % menu.entries.length);
        return;
      }
      if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
        // "/rename New title" is typed past the menu: Enter runs it once something follows the name.
        if (!(event.key === 'Enter' && menu.trigger.kind === 'command' && /\s/.test(prompt))) {
          event.preventDefault();
          choose(activeIndex);
          return;
        }
      }
    }
    if (menu && event.key === 'Escape') {
      event.preventDefault();
      setMenuClosedAt(prompt);
      return;
    }
    if (!menu && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey) {
      if (event.key === 'ArrowUp' && recall('back')) return event.preventDefault();
      if (event.key === 'ArrowDown' && historyIndex.current >= 0 && recall('forward'))
        return event.preventDefault();
    }
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void submit();
    }
  };

  const placeholder = readOnly
    ? (readOnlyHint ?? 'This session is read-only.')
    : awaitingApproval
      ? 'Decide the pending approval above to continue.'
      : running
        ? 'The assistant is working… press Esc or Stop to interrupt.'
        : 'Ask for something: / for commands, @ for files, ↑ for earlier prompts, Shift+Enter for a new line';
  const shownError = localError ?? error;
  const menuOpen = menu !== undefined;

  return (
    <form
      className="composer"
      onSubmit={(event) => void submit(event)}
      aria-label="Composer"
      onDragOver={files.onDragOver}
      onDrop={files.onDrop}
    >
      {menu ? (
        <ComposerMenu
          id={MENU_ID}
          label={menu.trigger.kind === 'command' ? 'Commands' : 'Files and folders'}
          entries={menu.entries}
          active={activeIndex}
          empty={
            menu.trigger.kind === 'command'
              ? `No command starts with /${menu.trigger.query}.`
              : `No file or folder of the project matches “${menu.trigger.query}”.`
          }
          onChoose={choose}
          onHover={setActive}
        />
      ) : null}
      {shownError ? (
        <p className="composer-error" role="alert">
          {shownError}
        </p>
      ) : null}
      <label className="visually-hidden" htmlFor="composer-input">
        Message
      </label>
      <AttachmentTray attachments={files} model={model} />
      <div className="composer-row">
        <textarea
          id="composer-input"
          ref={inputRef}
          value={prompt}
          onChange={(event) => {
            setPrompt(event.target.value);
            setCaret(event.target.selectionStart);
            setMenuClosedAt(undefined);
            setActive(0);
            setLocalError(undefined);
          }}
          onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
          onBlur={() => setMenuClosedAt(prompt)}
          onFocus={() => setMenuClosedAt(undefined)}
          onKeyDown={onKeyDown}
          onPaste={files.onPaste}
          placeholder={placeholder}
          disabled={readOnly}
          rows={2}
          // A text box that completes from a list (a combobox role would hide it from "textbox" queries and
          // from what screen readers announce for a multi-line field).
          aria-autocomplete="list"
          aria-controls={menuOpen ? MENU_ID : undefined}
          aria-activedescendant={menu && menu.entries.length > 0 ? `${MENU_ID}-${activeIndex}` : undefined}
        />
        <div className="composer-actions">
          {modeControl}
          <AttachButton attachments={files} disabled={readOnly} />
          {canResume && !running ? (
            <button type="button" className="button-secondary" onClick={onResume} disabled={busy || readOnly}>
              Resume
            </button>
          ) : null}
          {running ? (
            <button type="button" className="button-danger" onClick={onStop} aria-keyshortcuts="Escape">
              Stop
            </button>
          ) : (
            <button
              type="submit"
              className="button-primary"
              disabled={blocked || busy || prompt.trim() === ''}
            >
              Send
            </button>
          )}
        </div>
      </div>
    </form>
  );
}

const megabytes = (chars: number) =>
  (chars / 1_000_000).toLocaleString('en-US', { maximumFractionDigits: 1 });

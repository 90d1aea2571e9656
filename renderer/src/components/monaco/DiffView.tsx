import {
  useCallback,
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
  type JSX,
  type ReactNode,
} from 'react';
import type { editor as MonacoEditor } from 'monaco-editor/editor/editor.api';
import { isDarkTheme, subscribeTheme } from '../../lib/theme.js';
import { plural } from '../../lib/format.js';
import {
  diffOptions,
  LARGE_CHARS,
  LARGE_LINES,
  LARGE_MODEL_OPTIONS,
  readOnlyOptions,
  sizeOptions,
} from './editorOptions.js';
import { languageForPath } from './language.js';
import { loadMonaco, noteDiffComputed, type Monaco } from './loadMonaco.js';
import './monaco.css';

/** Side by side (two panes) or inline (one pane, removed lines above added ones). */
export type DiffMode = 'side-by-side' | 'inline';

type Props = {
  /** The file's path: names the view and picks the language by extension. */
  path: string;
  /** Text before; null when the file did not exist (shown empty, labelled "new file"). */
  original: string | null;
  /** Text after; null when the file is deleted (shown empty, labelled "deleted"). */
  modified: string | null;
  /** Accessible name of the view. */
  label: string;
  /** `fill`: as tall as its container (give it a height); `fit`: as tall as the diff, between 80 px and maxHeight. */
  sizing?: 'fill' | 'fit';
  maxHeight?: number;
  /** Words for the two sides in the toolbar (default "before" / "after"). */
  sides?: { original: string; modified: string };
  /** Extra controls at the end of the toolbar. */
  actions?: ReactNode;
};

/** The user's side-by-side / inline choice, shared by every diff view and kept across reloads. */
const modeStore = (() => {
  const key = 'keel.diffMode';
  const listeners = new Set<() => void>();
  let mode: DiffMode = readStoredMode(key);
  return {
    get: (): DiffMode => mode,
    set: (next: DiffMode): void => {
      mode = next;
      try {
        localStorage.setItem(key, next);
      } catch {
        // Storage can be unavailable (private mode, quota): the choice then lasts for this page only.
      }
      for (const listener of listeners) listener();
    },
    subscribe: (listener: () => void): (() => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
})();

function readStoredMode(key: string): DiffMode {
  try {
    return localStorage.getItem(key) === 'inline' ? 'inline' : 'side-by-side';
  } catch {
    return 'side-by-side';
  }
}

/** The side-by-side / inline choice every diff view follows, and its setter. */
export function useDiffMode(): [DiffMode, (mode: DiffMode) => void] {
  const mode = useSyncExternalStore(modeStore.subscribe, modeStore.get);
  return [mode, modeStore.set];
}

/** Line count of a text without splitting it (a 10,000-line file is scanned, not copied). */
function countLines(text: string): number {
  let lines = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++;
  return lines;
}

type Stats = { added: number; removed: number; identical: boolean };
/** The texts a view shows; `single` when one side is absent (a new or deleted file shows one editor). */
type Texts = { path: string; original: string; modified: string; single: 'added' | 'deleted' | undefined };
type Editors =
  | { kind: 'diff'; editor: MonacoEditor.IStandaloneDiffEditor }
  | { kind: 'single'; editor: MonacoEditor.IStandaloneCodeEditor };

/** Lines of a file's text as people count them (a final newline does not start another line). */
function lineCount(text: string): number {
  if (text === '') return 0;
  return countLines(text) - (text.endsWith('\n') ? 1 : 0);
}

/**
 * A read-only Monaco diff of two texts: language from the path, side-by-side or inline (the toolbar toggle,
 * remembered), unchanged regions collapsed (expandable), whitespace changes shown (an approval is of the
 * exact change). A new or deleted file is one editor of its text, not a diff against nothing. Large files
 * stay fast: the diff runs in the editor worker, and past 3,000 lines word wrap and bracket-pair colours
 * are off. The container carries `data-path`, and `data-state="ready"` with `data-ready-at`
 * (performance.now()) once the diff of those texts is computed and painted (the frame after Monaco drew
 * it), for tests and measurements.
 */
export function DiffView({
  path,
  original,
  modified,
  label,
  sizing = 'fill',
  maxHeight = 420,
  sides = { original: 'before', modified: 'after' },
  actions,
}: Props): JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  const editorRef = useRef<Editors | undefined>(undefined);
  const [monaco, setMonaco] = useState<Monaco | undefined>();
  const [failed, setFailed] = useState(false);
  const [mode, setMode] = useDiffMode();
  const [collapse, setCollapse] = useState(true);
  const [stats, setStats] = useState<Stats | undefined>();
  // Readiness names the texts it is for: new props are "loading" until their own diff is painted.
  const [ready, setReady] = useState<{ texts: Texts; at: number } | undefined>();
  const shown = useRef<Texts | undefined>(undefined);
  const [fitHeight, setFitHeight] = useState(160);
  const dark = useSyncExternalStore(subscribeTheme, isDarkTheme);
  const darkRef = useRef(dark);
  darkRef.current = dark;
  const originalText = original ?? '';
  const modifiedText = modified ?? '';
  const single =
    original === null && modified !== null
      ? 'added'
      : modified === null && original !== null
        ? 'deleted'
        : undefined;
  const large =
    Math.max(originalText.length, modifiedText.length) > LARGE_CHARS ||
    Math.max(countLines(originalText), countLines(modifiedText)) > LARGE_LINES;

  useEffect(() => {
    let live = true;
    loadMonaco().then(
      (loaded) => live && setMonaco(loaded),
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, []);

  const measure = useCallback(() => {
    const editors = editorRef.current;
    if (!editors) return;
    const heights =
      editors.kind === 'single'
        ? [editors.editor.getContentHeight()]
        : [editors.editor.getModifiedEditor().getContentHeight()];
    if (editors.kind === 'diff' && editors.editor.getOriginalEditor().getLayoutInfo().width > 0) {
      heights.push(editors.editor.getOriginalEditor().getContentHeight());
    }
    setFitHeight(Math.max(80, Math.min(maxHeight, Math.max(...heights) + 2)));
  }, [maxHeight]);

  const markReady = useCallback(() => {
    const texts = shown.current;
    // Ready once the result has been painted: Monaco renders in an animation frame; the next frame starts
    // after that one reached the screen.
    requestAnimationFrame(() =>
      requestAnimationFrame(() => texts && setReady({ texts, at: performance.now() })),
    );
  }, []);

  // One editor per view; models are swapped when the texts change (creating an editor costs more than a model).
  const isSingle = single !== undefined;
  useEffect(() => {
    if (!monaco || !host.current) return;
    if (isSingle) {
      const editor = monaco.editor.create(host.current, readOnlyOptions(label, darkRef.current));
      editorRef.current = { kind: 'single', editor };
      const sizeChange = editor.onDidContentSizeChange(measure);
      return () => {
        sizeChange.dispose();
        const model = editor.getModel();
        editorRef.current = undefined;
        editor.dispose();
        model?.dispose();
      };
    }
    const editor = monaco.editor.createDiffEditor(
      host.current,
      diffOptions(label, darkRef.current, modeStore.get() === 'side-by-side'),
    );
    editorRef.current = { kind: 'diff', editor };
    const subscriptions = [
      editor.onDidUpdateDiff(() => {
        noteDiffComputed();
        const changes = editor.getLineChanges() ?? [];
        let added = 0;
        let removed = 0;
        for (const change of changes) {
          if (
            change.modifiedEndLineNumber >= change.modifiedStartLineNumber &&
            change.modifiedEndLineNumber > 0
          ) {
            added += change.modifiedEndLineNumber - change.modifiedStartLineNumber + 1;
          }
          if (
            change.originalEndLineNumber >= change.originalStartLineNumber &&
            change.originalEndLineNumber > 0
          ) {
            removed += change.originalEndLineNumber - change.originalStartLineNumber + 1;
          }
        }
        setStats({ added, removed, identical: changes.length === 0 });
        markReady();
      }),
      editor.getModifiedEditor().onDidContentSizeChange(measure),
      editor.getOriginalEditor().onDidContentSizeChange(measure),
    ];
    return () => {
      for (const subscription of subscriptions) subscription.dispose();
      const models = editor.getModel();
      editorRef.current = undefined;
      // The editor lets go of its models before they are disposed (the reverse order logs an error).
      editor.dispose();
      models?.original.dispose();
      models?.modified.dispose();
    };
    // The label is applied below; recreating the editor for it would lose the scroll position.
  }, [monaco, measure, markReady, isSingle]);

  useEffect(() => {
    const editors = editorRef.current;
    if (!monaco || !editors) return;
    const language = languageForPath(path, monaco.languages.getLanguages());
    const createModel = (text: string) => {
      const model = monaco.editor.createModel(text, language);
      if (large) model.updateOptions(LARGE_MODEL_OPTIONS);
      return model;
    };
    setStats(undefined);
    shown.current = { path, original: originalText, modified: modifiedText, single };
    // Before the model: a large file's first render is already without wrapping.
    editors.editor.updateOptions(sizeOptions(large, editors.kind));
    if (editors.kind === 'single') {
      const text = single === 'deleted' ? originalText : modifiedText;
      const previous = editors.editor.getModel();
      editors.editor.setModel(createModel(text));
      previous?.dispose();
      const lines = lineCount(text);
      setStats({
        added: single === 'deleted' ? 0 : lines,
        removed: single === 'deleted' ? lines : 0,
        identical: false,
      });
      markReady();
      return;
    }
    const previous = editors.editor.getModel();
    editors.editor.setModel({
      original: createModel(originalText),
      modified: createModel(modifiedText),
    });
    previous?.original.dispose();
    previous?.modified.dispose();
  }, [monaco, path, originalText, modifiedText, single, isSingle, large, markReady]);

  useEffect(() => {
    const editors = editorRef.current;
    if (editors?.kind === 'diff') {
      editors.editor.updateOptions({
        renderSideBySide: mode === 'side-by-side',
        hideUnchangedRegions: { enabled: collapse },
        ariaLabel: label,
      });
    } else {
      editors?.editor.updateOptions({ ariaLabel: label });
    }
    // The other pane appears or disappears: the fitted height follows.
    requestAnimationFrame(measure);
  }, [mode, collapse, label, monaco, measure, isSingle]);

  useEffect(() => {
    monaco?.editor.setTheme(dark ? 'vs-dark' : 'vs');
  }, [monaco, dark]);

  const language = monaco ? languageForPath(path, monaco.languages.getLanguages()) : undefined;
  const readyAt =
    ready &&
    ready.texts.path === path &&
    ready.texts.original === originalText &&
    ready.texts.modified === modifiedText &&
    ready.texts.single === single
      ? ready.at
      : undefined;
  const state = failed ? 'failed' : readyAt !== undefined ? 'ready' : 'loading';
  return (
    <div
      className={`diff-view diff-view-${sizing}`}
      data-state={state}
      data-path={path}
      data-ready-at={readyAt}
      data-mode={mode}
      role="group"
      aria-label={label}
    >
      <div className="diff-toolbar">
        <code className="diff-path" title={path}>
          {path}
        </code>
        {single === 'added' ? <span className="tag tag-ok">new file</span> : null}
        {single === 'deleted' ? <span className="tag tag-danger">deleted</span> : null}
        {language && language !== 'plaintext' ? <span className="diff-language">{language}</span> : null}
        {stats ? (
          <span
            className="diff-stats"
            aria-label={`${plural(stats.added, 'line')} added, ${plural(stats.removed, 'line')} removed`}
          >
            {stats.identical ? (
              <span className="muted">no changes</span>
            ) : single === 'added' ? (
              <span className="diff-stat-added">+{stats.added}</span>
            ) : single === 'deleted' ? (
              <span className="diff-stat-removed">−{stats.removed}</span>
            ) : (
              <>
                <span className="diff-stat-added">+{stats.added}</span>{' '}
                <span className="diff-stat-removed">−{stats.removed}</span>
              </>
            )}
          </span>
        ) : null}
        {single ? (
          <span className="diff-sides muted">{single === 'added' ? sides.modified : sides.original}</span>
        ) : (
          <span className="diff-sides muted">
            {mode === 'side-by-side'
              ? `${sides.original} | ${sides.modified}`
              : `${sides.original} → ${sides.modified}`}
          </span>
        )}
        <span className="diff-toolbar-spacer" />
        {single ? null : (
          <>
            <div className="segmented" role="group" aria-label="Diff layout">
              <button
                type="button"
                aria-pressed={mode === 'side-by-side'}
                onClick={() => setMode('side-by-side')}
              >
                Side by side
              </button>
              <button type="button" aria-pressed={mode === 'inline'} onClick={() => setMode('inline')}>
                Inline
              </button>
            </div>
            <label className="diff-collapse">
              <input
                type="checkbox"
                checked={!collapse}
                onChange={(event) => setCollapse(!event.target.checked)}
              />
              Whole file
            </label>
          </>
        )}
        {actions}
      </div>
      {failed ? (
        <p className="diff-note" role="alert">
          The diff editor could not be loaded. Reload the window to try again.
        </p>
      ) : null}
      <div
        ref={host}
        className="diff-editor"
        style={sizing === 'fit' ? { height: fitHeight } : undefined}
        data-testid="diff-editor"
      />
      {state === 'loading' && !failed ? (
        <div className="diff-loading muted" aria-hidden="true">
          {single ? 'Loading…' : 'Computing diff…'}
        </div>
      ) : null}
    </div>
  );
}

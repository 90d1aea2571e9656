import type { editor } from 'monaco-editor/editor/editor.api';

/*
 * The options every Monaco view here is created with, in one place: DiffView and the idle warm-up
 * (warmMonaco.ts) must agree on fonts, or Monaco measures the font again for the first real diff.
 */

/** Height of one line in px (the fitted height of a view is computed from it). */
export const LINE_HEIGHT = 19;
const FONT_SIZE = 12.5;
const MONO =
  "ui-monospace, 'SF Mono', 'Cascadia Code', 'JetBrains Mono', Menlo, Consolas, 'DejaVu Sans Mono', monospace";

/** Files with more lines (or characters) than these count as large: collapsed, no word wrap, fewer extras. */
export const LARGE_LINES = 3000;
export const LARGE_CHARS = 1_000_000;

/** A read-only editor in the page's colour scheme (set at creation: no light flash in a dark window). */
export function readOnlyOptions(label: string, dark: boolean): editor.IStandaloneEditorConstructionOptions {
  return {
    theme: dark ? 'vs-dark' : 'vs',
    readOnly: true,
    domReadOnly: true,
    automaticLayout: true,
    minimap: { enabled: false },
    scrollBeyondLastLine: false,
    fontFamily: MONO,
    fontSize: FONT_SIZE,
    lineHeight: LINE_HEIGHT,
    ariaLabel: label,
    scrollbar: { alwaysConsumeMouseWheel: false },
  };
}

/**
 * A read-only diff: whitespace changes shown (a reviewer sees the exact change), unchanged regions
 * collapsed, no revert arrows or gutter menu (nothing here edits).
 */
export function diffOptions(
  label: string,
  dark: boolean,
  sideBySide: boolean,
): editor.IStandaloneDiffEditorConstructionOptions {
  return {
    ...readOnlyOptions(label, dark),
    originalEditable: false,
    renderSideBySide: sideBySide,
    useInlineViewWhenSpaceIsLimited: false,
    ignoreTrimWhitespace: false,
    renderMarginRevertIcon: false,
    renderGutterMenu: false,
    maxComputationTime: 5000,
    hideUnchangedRegions: { enabled: true, contextLineCount: 3, minimumLineCount: 3, revealLineCount: 20 },
  };
}

/** A large file's editors do not wrap lines (a diff wraps as its sides do: `inherit`, off unless set). */
export function sizeOptions(large: boolean, kind: 'diff' | 'single'): editor.IDiffEditorOptions {
  return kind === 'diff' ? { diffWordWrap: large ? 'off' : 'inherit' } : { wordWrap: large ? 'off' : 'on' };
}

/**
 * A large file's models go without bracket-pair colours: to colour the brackets on screen Monaco tokenizes
 * every line above them, synchronously, before it paints (~190 ms of the first diff of a change at line
 * 5,000 of a 10,000-line file; see README). Syntax colours stay. Set per model: the editor option of that
 * name would be written to Monaco's global configuration and so reach every model of every view.
 */
export const LARGE_MODEL_OPTIONS: editor.ITextModelUpdateOptions = {
  bracketColorizationOptions: { enabled: false, independentColorPoolPerBracketType: false },
};

import { loader } from '@monaco-editor/react';
import * as monaco from 'monaco-editor/editor/editor.api';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import 'monaco-editor/features/diffEditor/register';
import 'monaco-editor/features/find/register';
import 'monaco-editor/features/clipboard/register';
import 'monaco-editor/features/codicon/register';
import 'monaco-editor/features/folding/register';
import 'monaco-editor/languages/definitions/register.all';

/*
 * The one place Monaco is assembled: the editor core, the diff editor, find, copy, icons and every Monarch
 * tokenizer (each language's grammar is its own chunk, fetched the first time a file of it is shown). No
 * language services: they would need their own workers and the diff views never edit. Loaded lazily by
 * loadMonaco() so the startup bundle stays small.
 */

// Every worker Monaco asks for is the editor worker (diffs, links); it is bundled and served from 'self'.
self.MonacoEnvironment = { getWorker: () => new EditorWorker({ name: 'monaco-editor' }) };

// Monaco's Monarch set has no JSON (JSON comes with its language service, which needs its own worker).
monaco.languages.register({
  id: 'json',
  extensions: ['.json', '.jsonc', '.json5', '.jsonl', '.webmanifest', '.code-workspace'],
  filenames: ['.babelrc', '.eslintrc', '.prettierrc'],
  aliases: ['JSON'],
});
monaco.languages.setMonarchTokensProvider('json', {
  tokenizer: {
    root: [
      [/"(?:[^"\\]|\\.)*"(?=\s*:)/, 'type'],
      [/"(?:[^"\\]|\\.)*"/, 'string'],
      [/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/, 'number'],
      [/\b(?:true|false|null)\b/, 'keyword'],
      [/\/\/.*$/, 'comment'],
      [/[{}[\],:]/, 'delimiter'],
    ],
  },
});

// @monaco-editor/react would otherwise fetch Monaco from a CDN: hand it this bundle instead.
loader.config({ monaco });

/** The bundled Monaco API (editor and languages), configured: workers, loader, tokenizers. */
export { monaco };

import fs from 'node:fs';
import path from 'node:path';
import type { Diff } from '@agentclientprotocol/sdk';
import { applyPatch, parsePatch, reversePatch } from 'diff';
import { projectPath, type PathView } from './toolCalls.js';

/** Files larger than this are shown as their unified diff, not as two texts. */
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * A finished file change as ACP diffs (each file's old and new text): the new text is the file as the tool
 * left it in the session's root (read right after the tool's result is logged, before the next call runs),
 * the old text that file with the logged unified diff taken back. Undefined when it cannot be rebuilt
 * exactly (a redacted line, a bounded diff, a large or vanished file): the diff text is shown instead.
 */
export function rebuildDiffs(view: PathView, unifiedDiff: string): Diff[] | undefined {
  const root = view.roots[0];
  if (root === undefined) return undefined;
  try {
    const diffs: Diff[] = [];
    for (const patch of parsePatch(unifiedDiff)) {
      const name = fileName(patch.newFileName) ?? fileName(patch.oldFileName);
      if (name === undefined || patch.hunks.length === 0) continue;
      const shown = projectPath(view, name);
      if (shown === undefined) return undefined;
      const file = path.resolve(root, name);
      // The name is the model's: a path that leaves the root is never read.
      if (path.relative(root, file).startsWith('..')) return undefined;
      const deleted = fileName(patch.newFileName) === undefined;
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (stat && stat.size > MAX_FILE_BYTES) return undefined;
      const newText = deleted || !stat ? '' : fs.readFileSync(file, 'utf8');
      const oldText = applyPatch(newText, reversePatch(patch));
      if (oldText === false) return undefined;
      diffs.push({
        path: shown,
        oldText: oldText === '' && patch.hunks[0]?.oldLines === 0 ? null : oldText,
        newText,
      });
    }
    return diffs;
  } catch {
    return undefined;
  }
}

/** A patch's file name without git's a/ b/ prefixes; undefined for /dev/null (an added or deleted side). */
function fileName(name: string | undefined): string | undefined {
  if (name === undefined || name === '' || name === '/dev/null') return undefined;
  return name.replace(/^[ab]\//, '');
}

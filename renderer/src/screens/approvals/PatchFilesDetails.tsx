import type { JSX } from 'react';
import type { FileChangePreview } from '../../../../main/ipc/contract.js';
import { plural } from '../../lib/format.js';
import { FileChangeDetails } from './FileChangeDetails.js';

const CHANGE_LABEL: Record<NonNullable<FileChangePreview['change']>, string> = {
  added: 'new file',
  modified: 'modified',
  deleted: 'deleted',
  moved: 'moved',
};

/** A file's name as the list and its heading show it: `old → new` for a move. */
function nameOf(file: FileChangePreview): string {
  return file.fromPath !== undefined ? `${file.fromPath} → ${file.path}` : file.path;
}

/**
 * Every file an apply_patch call would change: a list of them (what happens to each), then each file's own
 * Monaco diff (its header names the file; a move says `old → new` above it), stacked in patch order, so a person reviews the whole change before one
 * decision covers all of it.
 */
export function PatchFilesDetails({
  files,
  tool,
}: {
  files: FileChangePreview[];
  tool: string;
}): JSX.Element {
  const listed = files.filter((file) => file.path !== '');
  return (
    <div className="patch-files">
      {listed.length > 0 ? (
        <>
          <p className="hint">{plural(listed.length, 'file')} in this patch, applied all or nothing:</p>
          <ul className="patch-files-list" aria-label="Files in the patch">
            {listed.map((file) => (
              <li key={file.path}>
                <span className="tag">{CHANGE_LABEL[file.change ?? 'modified']}</span>{' '}
                <code>{nameOf(file)}</code>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {files.map((file, index) => (
        <section
          key={file.path === '' ? `error-${index}` : file.path}
          className="patch-file"
          aria-label={file.path === '' ? 'The patch' : `Change to ${file.path}`}
        >
          {file.fromPath !== undefined ? (
            // The diff's own header names the file; a move also says where it came from.
            <h4 className="patch-file-name">
              <code>{nameOf(file)}</code>
            </h4>
          ) : null}
          <FileChangeDetails file={file} tool={tool} />
        </section>
      ))}
    </div>
  );
}

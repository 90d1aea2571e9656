import type { JSX } from 'react';
import type { FileChangePreview } from '../../../../main/ipc/contract.js';
import { DiffView } from '../../components/monaco/DiffView.js';
import { PatchView } from '../../components/monaco/PatchView.js';

/**
 * The exact change an edit_file / write_file call would make: a Monaco diff of the file now against the file
 * after the call; the unified diff when the texts are not given (binary, over 4 MB), or the reason the call
 * cannot apply as asked.
 */
export function FileChangeDetails({ file, tool }: { file: FileChangePreview; tool: string }): JSX.Element {
  const texts = file.proposed !== null && !file.binary && !file.tooLarge && file.error === undefined;
  return (
    <div className="file-change">
      {file.changedSinceRequest ? (
        <p className="approval-warning" role="note">
          The file changed since the model asked: this is what the call would do to the file as it is now.
        </p>
      ) : null}
      {file.error !== undefined ? (
        <p className="approval-warning" role="note">
          This call cannot apply as asked: {file.error}
        </p>
      ) : null}
      {file.binary ? (
        <p className="hint">{file.path} is a binary file: only its summary can be shown.</p>
      ) : null}
      {file.tooLarge ? (
        <p className="hint">{file.path} is larger than 4 MB: the unified diff is shown instead.</p>
      ) : null}
      {texts ? (
        <DiffView
          path={file.path}
          original={file.original}
          modified={file.proposed}
          label={`Proposed ${tool} change to ${file.path}`}
          sizing="fit"
          maxHeight={480}
          sides={{ original: 'now', modified: `after ${tool}` }}
        />
      ) : file.diff !== '' && file.error === undefined ? (
        <PatchView patch={file.diff} label={`Proposed change to ${file.path}`} />
      ) : null}
    </div>
  );
}

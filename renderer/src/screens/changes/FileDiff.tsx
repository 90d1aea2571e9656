import type { JSX } from 'react';
import { call } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useQuery } from '../../api/useQuery.js';
import { ErrorState, LoadingState } from '../../components/States.js';
import { DiffView } from '../../components/monaco/DiffView.js';
import { PatchView } from '../../components/monaco/PatchView.js';
import type { FileRef } from './changeRows.js';
import { readCheckout } from './useChanges.js';

type Props = {
  sessionId: string;
  file: FileRef;
  /** Re-read when this changes (the checkout was written to again). */
  revision: number;
  /** Apply found this file changed on both sides. */
  conflict: boolean;
};

/**
 * One changed file as a Monaco diff: the project folder against the session's checkout (uncommitted), or the
 * folder before and after a commit. When the texts cannot be given (binary, over 4 MB, changed since the
 * commit) it says why and shows the commit's patch when there is one.
 */
export function FileDiff({ sessionId, file, revision, conflict }: Props): JSX.Element {
  const versions = useQuery(
    () =>
      readCheckout(() =>
        call(
          keel().persistent.file({
            sessionId,
            dir: file.dir,
            path: file.path,
            ...(file.commitSeq !== undefined ? { commitSeq: file.commitSeq } : {}),
          }),
        ),
      ),
    [sessionId, file.dir, file.path, file.commitSeq, revision],
  );
  const data = versions.data;
  if (versions.error) return <ErrorState message={versions.error} onRetry={versions.reload} />;
  if (!data) return <LoadingState label={`Reading ${file.path}…`} />;
  const committed = file.commitSeq !== undefined;
  const hasTexts = !data.binary && !data.tooLarge && (data.original !== null || data.modified !== null);
  return (
    <div className="file-diff">
      {conflict ? (
        <p className="changes-conflict-note" role="note">
          <strong>Conflict.</strong> The project folder changed this file since the session’s checkout was
          made, in the same places the session changed it: applying wrote nothing. Left: the project folder
          now; right: the session’s version.
        </p>
      ) : null}
      {data.note && !hasTexts ? <p className="hint file-diff-note">{data.note}</p> : null}
      {hasTexts ? (
        <DiffView
          path={`${data.dir}/${data.path}`}
          original={data.change === 'added' ? null : (data.original ?? '')}
          modified={data.change === 'deleted' ? null : (data.modified ?? '')}
          label={`Diff of ${data.path} in ${data.dir}`}
          sides={
            committed
              ? { original: 'before the commit', modified: 'after the commit' }
              : { original: 'project folder', modified: 'session checkout' }
          }
        />
      ) : data.patch ? (
        <PatchView patch={data.patch} label={`Patch of ${data.path}`} />
      ) : !data.note ? (
        <p className="hint file-diff-note">Nothing to show for {data.path}.</p>
      ) : null}
    </div>
  );
}

import type { JSX } from 'react';
import { PatchView } from '../../../components/monaco/PatchView.js';
import { plural } from '../../../lib/format.js';
import { hunksOf, type CallView } from './toolCallView.js';

/**
 * A tool call's arguments for people: the command line, the file and lines read, the edit as a diff (the diff
 * the tool recorded once it ran, else the one the call asks for), a new file's text, or the fields as text.
 */
export function CallArguments({
  view,
  appliedDiff,
}: {
  view: CallView;
  appliedDiff?: string | undefined;
}): JSX.Element {
  switch (view.kind) {
    case 'command':
      return (
        <div className="tool-command-line">
          <pre className="tool-command" aria-label="Command">
            <span className="tool-prompt" aria-hidden="true">
              ${' '}
            </span>
            {view.command}
          </pre>
          {view.cwd ? <p className="tool-cwd muted">in {view.cwd}</p> : null}
        </div>
      );
    case 'read':
      return (
        <p className="tool-read">
          <code>{view.path}</code> <span className="muted">{view.range ?? 'whole file'}</span>
        </p>
      );
    case 'edit':
      return (
        <div className="tool-edit">
          <p className="tool-read">
            <code>{view.path}</code>
            {view.replaceAll ? <span className="muted"> every occurrence</span> : null}
          </p>
          <PatchView
            patch={appliedDiff ? hunksOf(appliedDiff) : view.patch}
            label={`Change to ${view.path}`}
          />
        </div>
      );
    case 'write':
      return (
        <div className="tool-edit">
          <p className="tool-read">
            <code>{view.path}</code>{' '}
            <span className="muted">{plural(lines(view.content), 'line')} written</span>
          </p>
          {appliedDiff ? (
            <PatchView patch={hunksOf(appliedDiff)} label={`Change to ${view.path}`} />
          ) : (
            <details className="tool-result">
              <summary>Text written</summary>
              <pre className="tool-output">{view.content}</pre>
            </details>
          )}
        </div>
      );
    case 'patch':
    case 'raw':
      return (
        <pre className="tool-args" aria-label="Arguments">
          {view.text}
        </pre>
      );
    case 'fields':
      return (
        <dl className="tool-fields" aria-label="Arguments">
          {view.fields.map((field) => (
            <div key={field.name} className={field.block ? 'tool-field is-block' : 'tool-field'}>
              <dt>{field.name}</dt>
              <dd>{field.block ? <pre className="tool-args">{field.value}</pre> : field.value}</dd>
            </div>
          ))}
        </dl>
      );
  }
}

function lines(text: string): number {
  if (text === '') return 0;
  const count = text.split('\n').length;
  return text.endsWith('\n') ? count - 1 : count;
}

import type { JSX } from 'react';
import type { CommandPreview } from '../../../../main/ipc/contract.js';

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  if (seconds < 120) return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
  const minutes = seconds / 60;
  return `${Number.isInteger(minutes) ? minutes : minutes.toFixed(1)} min`;
}

function PathList({ paths, empty }: { paths: readonly string[]; empty: string }): JSX.Element {
  if (paths.length === 0) return <span className="muted">{empty}</span>;
  return (
    <ul className="command-paths">
      {paths.map((path) => (
        <li key={path}>
          <code>{path}</code>
        </li>
      ))}
    </ul>
  );
}

/** What a run_command request would run: the exact command, where, for how long, and what its box lets it touch. */
export function CommandDetails({ command }: { command: CommandPreview }): JSX.Element {
  const confined = command.sandbox.kind !== 'none';
  return (
    <div className="command-details">
      <pre className="command-line" aria-label="Command">
        <span aria-hidden="true" className="muted">
          ${' '}
        </span>
        {command.command}
      </pre>
      <dl className="command-facts">
        <dt>Working directory</dt>
        <dd>
          <code>{command.cwd}</code> <span className="muted">({command.cwdPath})</span>
        </dd>
        <dt>Timeout</dt>
        <dd>
          {formatDuration(command.timeoutMs)}
          {command.timeoutCapped && command.requestedTimeoutMs !== undefined ? (
            <span className="muted"> (asked for {formatDuration(command.requestedTimeoutMs)}, capped)</span>
          ) : command.requestedTimeoutMs === undefined ? (
            <span className="muted"> (default)</span>
          ) : null}
          {' · '}memory {command.memoryMb} MB
        </dd>
        <dt>Sandbox</dt>
        <dd>
          {confined ? (
            <span className="tag tag-ok">{command.sandbox.kind}</span>
          ) : (
            <span className="tag tag-warning">no sandbox</span>
          )}{' '}
          <span className="muted">{command.sandbox.reason}</span>
        </dd>
        <dt>Network</dt>
        <dd>
          {command.networkAllow.length === 0 ? (
            'none (no network at all)'
          ) : (
            <>
              only through the allowlist proxy to{' '}
              {command.networkAllow.map((host, index) => (
                <span key={host}>
                  {index > 0 ? ', ' : ''}
                  <code>{host}</code>
                </span>
              ))}
            </>
          )}
        </dd>
        <dt>May write</dt>
        <dd>
          <PathList paths={command.writable} empty="nothing" />
        </dd>
        {command.readOnly.length > 0 ? (
          <>
            <dt>Stays read-only</dt>
            <dd>
              <PathList paths={command.readOnly} empty="" />
            </dd>
          </>
        ) : null}
        {command.hidden.length > 0 ? (
          <>
            <dt>Cannot see</dt>
            <dd>
              <PathList paths={command.hidden} empty="" />
            </dd>
          </>
        ) : null}
      </dl>
      {!confined ? (
        <p className="approval-warning" role="note">
          No OS sandbox confines commands on this machine: this command would run with your own permissions.
        </p>
      ) : null}
    </div>
  );
}

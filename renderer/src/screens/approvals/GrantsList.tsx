import { useState, type JSX } from 'react';
import type { GrantRecord } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { formatClock, formatDateTime } from '../../lib/format.js';

/** How a grant's scope reads in a list: "this session", "this project", "path src/**", "prefix npm test". */
export function scopeLabel(scope: string): string {
  if (scope === 'session') return 'this session';
  // A grant with scope tool: this session and the project's later ones (a rule kept until revoked).
  if (scope === 'tool') return 'this project';
  if (scope.startsWith('path:')) return `path ${scope.slice(5)}`;
  if (scope.startsWith('prefix:')) return `prefix ${scope.slice(7)}`;
  return scope;
}

type Props = {
  sessionId: string;
  grants: readonly GrantRecord[];
  readOnly: boolean;
  /** A turn runs: revoking waits for it (main answers `busy`). */
  running: boolean;
  onRevoked: () => void;
};

/** The grants in effect in a session (wider than once), each with what it allows, when, and a Revoke button. */
export function GrantsList({ sessionId, grants, readOnly, running, onRevoked }: Props): JSX.Element | null {
  const [busySeq, setBusySeq] = useState<number | undefined>();
  const [error, setError] = useState<string | undefined>();
  if (grants.length === 0) return null;

  const revoke = async (grant: GrantRecord) => {
    setBusySeq(grant.seq);
    setError(undefined);
    try {
      await call(keel().grants.revoke({ sessionId, grantSeq: grant.seq }));
      onRevoked();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusySeq(undefined);
    }
  };

  return (
    <details className="grants" aria-label="Grants in effect">
      <summary>
        {grants.length === 1 ? '1 grant in effect' : `${grants.length} grants in effect`}
        <span className="muted"> — calls they cover run without asking</span>
      </summary>
      {error ? (
        <p className="composer-error" role="alert">
          {error}
        </p>
      ) : null}
      <ul className="grant-list">
        {grants.map((grant) => (
          <li
            key={grant.seq}
            className="grant"
            aria-label={`Grant: ${grant.tool} for ${scopeLabel(grant.scope)}`}
          >
            <div className="grant-main">
              <code>{grant.tool}</code> for <strong>{scopeLabel(grant.scope)}</strong>
              <time className="muted" dateTime={grant.grantedAt} title={formatDateTime(grant.grantedAt)}>
                {' '}
                · granted {formatClock(grant.grantedAt)}
              </time>
              <p className="grant-allows">Allows {grant.allows}.</p>
            </div>
            <button
              type="button"
              className="button-secondary"
              disabled={readOnly || running || busySeq !== undefined}
              title={running ? 'Wait for the running turn to end' : 'The calls it covers will ask again'}
              onClick={() => void revoke(grant)}
            >
              {busySeq === grant.seq ? 'Revoking…' : 'Revoke'}
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}

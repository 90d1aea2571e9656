import type { JSX } from 'react';
import type { SessionStatus } from '../../../main/ipc/contract.js';

const LABELS: Record<SessionStatus, string> = {
  idle: 'Idle',
  running: 'Running',
  awaiting_approval: 'Awaiting approval',
  interrupted: 'Interrupted',
  error: 'Error',
};

/** The session status as a coloured badge with a text label (colour is never the only signal). */
export function StatusBadge({ status }: { status: SessionStatus }): JSX.Element {
  return (
    <span className={`badge badge-${status}`} data-status={status}>
      {status === 'running' ? <span className="pulse" aria-hidden="true" /> : null}
      {LABELS[status]}
    </span>
  );
}

/** The words for a status, for labels and announcements. */
export function statusLabel(status: SessionStatus): string {
  return LABELS[status];
}

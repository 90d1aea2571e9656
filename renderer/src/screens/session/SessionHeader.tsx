import type { JSX, ReactNode } from 'react';
import type { ChannelOutput, SessionStatus } from '../../../../main/ipc/contract.js';
import { StatusBadge } from '../../components/StatusBadge.js';
import { sessionTitle } from '../browser/SessionRow.js';
import { ContextMeter } from './ContextMeter.js';

type Opened = ChannelOutput<'sessions.open'>;

/** The session's title, status, surface toggles, pinned model, policy, folder and context meter. */
export function SessionHeader({
  opened,
  status,
  onArchive,
  children,
}: {
  opened: Opened;
  status: SessionStatus;
  onArchive: () => void;
  /** Extra controls of the session's surfaces (Changes…), after the status. */
  children?: ReactNode;
}): JSX.Element {
  const { session, pin, policy, context } = opened;
  return (
    <header className="session-header">
      <div className="session-header-main">
        <h1 className="session-heading">{sessionTitle(session)}</h1>
        <StatusBadge status={status} />
        {children}
        <button type="button" className="link-button" onClick={onArchive}>
          {session.archived ? 'Restore' : 'Archive'}
        </button>
      </div>
      <div className="session-header-meta">
        <span title="Pinned model">
          {pin.provider}:<strong>{pin.model}</strong>
        </span>
        <span title="Approval policy">policy {policy}</span>
        <span className="session-folder" title={session.projectFolder}>
          <code>{session.projectFolder}</code>
          {session.projectExists ? null : <span className="tag tag-warning">folder missing</span>}
        </span>
        <ContextMeter usedTokens={context.usedTokens} window={context.window} compactAt={context.compactAt} />
      </div>
    </header>
  );
}

import { useContext, useEffect, useState, type JSX, type ReactNode } from 'react';
import { AppContext } from '../../appContext.js';
import type { ChannelOutput, SessionStatus } from '../../../../main/ipc/contract.js';
import { StatusBadge } from '../../components/StatusBadge.js';
import { sessionTitle } from '../browser/SessionRow.js';
import { useUncommitted } from '../changes/useChanges.js';
import { describeCheckoutMode } from './checkoutMode.js';
import { ContextMeter } from './ContextMeter.js';
import { HeaderSettings } from './HeaderSettings.js';
import { SpendMeter } from './SpendMeter.js';
import { ModelRetirementWarning, ModelSwitchDialog } from './ModelSwitch.js';
import { DeleteSessionDialog, EditableTitle } from './SessionManage.js';
import './sessionHeader.css';

type Opened = ChannelOutput<'sessions.open'>;

/**
 * The session's title, status, surface toggles, pinned model, endpoint, effort and policy (each changeable
 * here, HeaderSettings.tsx; a warning when the model is retired or retiring), folder (and how changes reach it) and context meter.
 */
export function SessionHeader({
  opened,
  status,
  onArchive,
  modelSwitchAsked = 0,
  onChanged,
  children,
}: {
  /** The session's summary changed here (renamed): re-read it. */
  onChanged?: () => void;
  opened: Opened;
  status: SessionStatus;
  onArchive: () => void;
  /** Counts requests to open the model switch from elsewhere (the composer's /model and /effort). */
  modelSwitchAsked?: number;
  /** Extra controls of the session's surfaces (Changes…), after the status. */
  children?: ReactNode;
}): JSX.Element {
  const { session, pin, context } = opened;
  // undefined: closed; otherwise the dialog is open on `model` (undefined: the pinned one).
  const [switching, setSwitching] = useState<{ model: string | undefined } | undefined>();
  const [deleting, setDeleting] = useState(false);
  const navigate = useContext(AppContext)?.navigate;
  const canSwitch = !opened.readOnly && !opened.running && status !== 'running';
  useEffect(() => {
    if (modelSwitchAsked > 0) setSwitching({ model: undefined });
  }, [modelSwitchAsked]);
  return (
    <header className="session-header">
      <div className="session-header-main">
        <EditableTitle
          sessionId={session.id}
          title={sessionTitle(session)}
          canRename={!opened.readOnly}
          onRenamed={() => onChanged?.()}
        />
        <StatusBadge status={status} />
        {children}
      </div>
      <div className="session-header-meta">
        <HeaderSettings
          opened={opened}
          running={status === 'running'}
          onSwitch={() => setSwitching({ model: undefined })}
          onChanged={onChanged}
        />
        <ContextMeter usedTokens={context.usedTokens} window={context.window} compactAt={context.compactAt} />
        <SpendMeter sessionId={session.id} running={status === 'running'} readOnly={opened.readOnly} />
        {/* The folder and how changes reach it, on a line of their own: the same header for every mode. */}
        <span className="session-place">
          <span className="session-folder" title={session.projectFolder}>
            <code>{session.projectFolder}</code>
            {session.projectExists ? null : <span className="tag tag-warning">folder missing</span>}
          </span>
          <CheckoutModeTag sessionId={session.id} checkouts={opened.persistentDirs} />
        </span>
        <button type="button" className="link-button session-archive" onClick={onArchive}>
          {session.archived ? 'Restore' : 'Archive'}
        </button>
        <button
          type="button"
          className="link-button session-archive"
          disabled={opened.running || status === 'running'}
          onClick={() => setDeleting(true)}
        >
          Delete…
        </button>
      </div>
      <ModelRetirementWarning pin={pin} canSwitch={canSwitch} onSwitch={(model) => setSwitching({ model })} />
      {deleting ? (
        <DeleteSessionDialog
          sessionId={session.id}
          title={sessionTitle(session)}
          projectFolder={session.projectFolder}
          onClose={() => setDeleting(false)}
          onDeleted={() => navigate?.({ screen: 'home' })}
        />
      ) : null}
      {switching ? (
        <ModelSwitchDialog
          sessionId={session.id}
          pin={pin}
          initialModel={switching.model}
          running={opened.running || status === 'running'}
          onClose={() => setSwitching(undefined)}
        />
      ) : null}
    </header>
  );
}

/**
 * How the session's changes reach its folder, with a tooltip (read to screen readers too) that explains it.
 * A manual checkout also counts its uncommitted files, from the read the Changes button already shares.
 */
function CheckoutModeTag({
  sessionId,
  checkouts,
}: {
  sessionId: string;
  checkouts: Opened['persistentDirs'];
}): JSX.Element {
  const reviewed = checkouts.some((dir) => dir.commit === 'manual' && !dir.readOnly);
  const uncommitted = useUncommitted(sessionId, reviewed);
  const {
    mode,
    label,
    tooltip,
    uncommitted: count,
  } = describeCheckoutMode(checkouts, uncommitted.data?.dirs);
  return (
    <span className="checkout-mode" data-mode={mode} title={tooltip}>
      <span className="checkout-mode-icon" aria-hidden="true">
        {mode === 'direct' ? '✎' : '⎇'}
      </span>
      {label}
      {count !== undefined && count > 0 ? (
        <span className="checkout-mode-count">{count} uncommitted</span>
      ) : null}
      <span className="visually-hidden">. {tooltip}</span>
    </span>
  );
}

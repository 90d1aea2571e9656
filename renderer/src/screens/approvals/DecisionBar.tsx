import { useState, type JSX } from 'react';
import type { ApprovalScope, ScopeKind } from '../../../../main/ipc/contract.js';
import { ARIA_SHORTCUTS, buildScope, describeScope, editablePart, shortcutLabels } from './scopes.js';

/** What a decision sends: a grant with its scope, or a denial with an optional reason. */
export type Decision =
  { decision: 'grant'; scope: ApprovalScope; always?: boolean } | { decision: 'deny'; reason?: string };

type Props = {
  requestSeq: number;
  tool: string;
  allowedScopes: readonly ScopeKind[];
  /** Pre-filled `path:<glob>` / `prefix:<command>`. */
  suggested: { path?: string | undefined; prefix?: string | undefined; domain?: string | undefined };
  /** The call is on a protected path: no grant ever covers such a call, it asks every time. */
  protectedPath: boolean;
  disabled: boolean;
  /** The shortcuts act on this request (the oldest pending one): show them. */
  showShortcuts: boolean;
  platform: string;
  onDecide: (decision: Decision) => void;
  /** The deny reason, owned by the card so the keyboard shortcut can send it too. */
  reason: string;
  onReasonChange: (reason: string) => void;
};

/**
 * The decision controls of one request: allow once / for the session / (an MCP tool) in this project from now
 * on / for a path glob or command prefix (editable), or deny with a reason.
 */
export function DecisionBar({
  requestSeq,
  tool,
  allowedScopes,
  suggested,
  protectedPath,
  disabled,
  showShortcuts,
  platform,
  onDecide,
  reason,
  onReasonChange,
}: Props): JSX.Element {
  const scoped: 'path' | 'prefix' | undefined = allowedScopes.includes('path')
    ? 'path'
    : allowedScopes.includes('prefix')
      ? 'prefix'
      : undefined;
  const [scopeText, setScopeText] = useState(() =>
    editablePart(scoped === 'path' ? suggested.path : scoped === 'prefix' ? suggested.prefix : undefined),
  );
  const [touched, setTouched] = useState(false);
  // In a short window the bar shows Allow / Deny on one row; the scope and the reason open on demand (CSS).
  const [expanded, setExpanded] = useState(false);
  const keys = shortcutLabels(platform);
  const built = scoped ? buildScope(scoped, scopeText) : undefined;
  const scopeId = `scope-${requestSeq}`;
  const reasonId = `deny-reason-${requestSeq}`;
  const scopeHintId = `scope-hint-${requestSeq}`;
  const allowScoped = (always = false) => {
    setTouched(true);
    if (built?.ok) onDecide({ decision: 'grant', scope: built.scope, ...(always ? { always: true } : {}) });
  };
  const deny = () => {
    const text = reason.trim();
    onDecide(text ? { decision: 'deny', reason: text } : { decision: 'deny' });
  };

  return (
    <div className={`decision-bar${expanded ? ' is-expanded' : ''}`}>
      <div className="decision-row">
        <button
          type="button"
          className="button-primary"
          disabled={disabled}
          onClick={() => onDecide({ decision: 'grant', scope: 'once' })}
          aria-keyshortcuts={showShortcuts ? ARIA_SHORTCUTS.once : undefined}
          title={describeScope(tool, 'once')}
        >
          Allow once
        </button>
        {allowedScopes.includes('session') ? (
          <button
            type="button"
            className="button-secondary"
            disabled={disabled}
            onClick={() => onDecide({ decision: 'grant', scope: 'session' })}
            aria-keyshortcuts={showShortcuts ? ARIA_SHORTCUTS.session : undefined}
            title={describeScope(tool, 'session')}
          >
            Allow {tool} for this session
          </button>
        ) : null}
        {allowedScopes.includes('domain') && suggested.domain ? (
          <>
            <button
              type="button"
              className="button-secondary"
              disabled={disabled}
              onClick={() => onDecide({ decision: 'grant', scope: suggested.domain as ApprovalScope })}
              title={describeScope(tool, suggested.domain)}
            >
              Allow {editablePart(suggested.domain)} for this session
            </button>
            <button
              type="button"
              className="button-secondary"
              disabled={disabled}
              onClick={() =>
                onDecide({ decision: 'grant', scope: suggested.domain as ApprovalScope, always: true })
              }
              title={`Also keep it as the permission rule WebFetch(${suggested.domain}) of this project (Settings → Project setup lists and removes it)`}
            >
              Always allow {editablePart(suggested.domain)} in this project
            </button>
          </>
        ) : null}
        {allowedScopes.includes('tool') ? (
          <button
            type="button"
            className="button-secondary"
            disabled={disabled}
            onClick={() => onDecide({ decision: 'grant', scope: 'tool' })}
            title={describeScope(tool, 'tool')}
          >
            Always allow {tool} in this project
          </button>
        ) : null}
        {scoped ? (
          <div className="decision-scope-group">
            <label htmlFor={scopeId} className="decision-label">
              {scoped === 'path' ? 'Path glob' : 'Command prefix'}
            </label>
            <input
              id={scopeId}
              type="text"
              className="decision-scope"
              value={scopeText}
              spellCheck={false}
              autoComplete="off"
              disabled={disabled}
              aria-describedby={scopeHintId}
              aria-invalid={touched && built?.ok === false}
              onChange={(event) => setScopeText(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && !event.ctrlKey && !event.metaKey) {
                  event.preventDefault();
                  allowScoped();
                }
              }}
            />
            <button
              type="button"
              className="button-secondary"
              disabled={disabled || built?.ok === false}
              onClick={() => allowScoped()}
            >
              {scoped === 'path' ? 'Allow for path' : 'Allow for prefix'}
            </button>
            <button
              type="button"
              className="button-secondary"
              disabled={disabled || built?.ok === false}
              onClick={() => allowScoped(true)}
              title="Also keep it as a permission rule of this project (Settings → Project setup lists and removes it)"
            >
              Always allow in this project
            </button>
          </div>
        ) : null}
      </div>
      {protectedPath ? (
        <p className="decision-hint">
          Protected paths ask every time: a wider grant here covers only other, unprotected calls.
        </p>
      ) : null}
      {scoped ? (
        <p id={scopeHintId} className={`decision-hint${built?.ok === false ? ' is-error' : ''}`}>
          {built?.ok ? describeScope(tool, built.scope) : built?.error}
        </p>
      ) : null}
      <div className="decision-row">
        <label htmlFor={reasonId} className="decision-label">
          Reason
        </label>
        <input
          id={reasonId}
          type="text"
          className="decision-reason"
          placeholder="Optional: why not, or what to do instead (sent to the model)"
          value={reason}
          disabled={disabled}
          onChange={(event) => onReasonChange(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.ctrlKey && !event.metaKey) {
              event.preventDefault();
              deny();
            }
          }}
        />
        <button
          type="button"
          className="button-danger"
          disabled={disabled}
          onClick={deny}
          aria-keyshortcuts={showShortcuts ? ARIA_SHORTCUTS.deny : undefined}
        >
          Deny
        </button>
        <button
          type="button"
          className="link-button decision-more"
          aria-expanded={expanded}
          aria-label={scoped ? 'Scope and deny options' : 'Deny options'}
          title={
            scoped === 'path'
              ? 'Allow for a path glob, or deny with a reason'
              : scoped === 'prefix'
                ? 'Allow for a command prefix, or deny with a reason'
                : 'Deny with a reason'
          }
          onClick={() => setExpanded((open) => !open)}
        >
          {expanded ? 'Less' : 'More…'}
        </button>
      </div>
      {showShortcuts ? (
        <p className="decision-shortcuts" aria-label="Keyboard shortcuts">
          <kbd>{keys.once}</kbd> allow once
          {allowedScopes.includes('session') ? (
            <>
              {' · '}
              <kbd>{keys.session}</kbd> allow for this session
            </>
          ) : null}
          {' · '}
          <kbd>{keys.deny}</kbd> deny
        </p>
      ) : null}
    </div>
  );
}

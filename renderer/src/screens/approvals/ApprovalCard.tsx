import { useCallback, useEffect, useRef, useState, type JSX } from 'react';
import type { ApprovalPreview, ScopeKind } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { EventOf, SessionEvent } from '../../api/types.js';
import { useQuery } from '../../api/useQuery.js';
import { loadMonaco } from '../../components/monaco/loadMonaco.js';
import { formatClock, formatDateTime, prettyJson } from '../../lib/format.js';
import { CommandDetails } from './CommandDetails.js';
import { DecisionBar, type Decision } from './DecisionBar.js';
import { FileChangeDetails } from './FileChangeDetails.js';
import { PatchFilesDetails } from './PatchFilesDetails.js';
import { shortcutDecision } from './scopes.js';

type ApprovalRequest = EventOf<'approval_request'>;

/** What deciding recorded, for the panel's receipt. */
export type DecisionReceipt = { request: ApprovalRequest; event: SessionEvent; target: string | undefined };

type Props = {
  sessionId: string;
  request: ApprovalRequest;
  readOnly: boolean;
  /** The oldest pending request: the keyboard shortcuts act on it. */
  primary: boolean;
  platform: string;
  onDecided: (receipt: DecisionReceipt) => void;
};

/** The path or command a request is about, for headings (from the preview, else from the logged arguments). */
function targetOf(request: ApprovalRequest, preview: ApprovalPreview | undefined): string | undefined {
  if (preview?.file?.path) return preview.file.path;
  const named = preview?.files?.filter((file) => file.path !== '') ?? [];
  if (named.length === 1) return named[0]?.path;
  if (named.length > 1) return `${named.length} files`;
  if (preview?.command) return preview.command.command;
  try {
    const args = JSON.parse(request.arguments) as Record<string, unknown>;
    const value = args['path'] ?? args['command'];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** True for a text field a key press in which is typing, not a command (Monaco's read-only views are not). */
function isTextField(target: EventTarget | null): target is HTMLElement {
  if (!(target instanceof HTMLElement) || target.closest('.monaco-editor')) return false;
  return target.isContentEditable || target.matches('input, textarea, select');
}

/**
 * Whether a shortcut may act given where focus is: Ctrl+Backspace never inside a text field (it deletes a
 * word there); Ctrl+Enter inside the card's own fields and the composer (which cannot send while an approval
 * is pending) but not in other fields (search, dialogs).
 */
function shortcutApplies(
  wanted: 'once' | 'session' | 'deny',
  target: EventTarget | null,
  card: HTMLElement | null,
): boolean {
  if (!isTextField(target)) return true;
  if (wanted === 'deny') return false;
  return (card?.contains(target) ?? false) || target.id === 'composer-input';
}

/**
 * One pending request in full: why it asks (policy, protected path), the exact change as a Monaco diff or the
 * command with its box, and the decision controls with their keyboard shortcuts (when primary).
 */
export function ApprovalCard({
  sessionId,
  request,
  readOnly,
  primary,
  platform,
  onDecided,
}: Props): JSX.Element {
  const preview = useQuery(
    () => call(keel().approvals.preview({ sessionId, requestSeq: request.seq })),
    [sessionId, request.seq],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [reason, setReason] = useState('');
  const cardRef = useRef<HTMLElement>(null);
  const data = preview.data;
  const isFileChange =
    request.tool === 'edit_file' || request.tool === 'write_file' || request.tool === 'apply_patch';
  // The diff editor's code is fetched while the preview is computed, not after.
  useEffect(() => {
    if (isFileChange) loadMonaco().catch(() => undefined);
  }, [isFileChange]);
  const allowedScopes: ScopeKind[] =
    data?.allowedScopes ?? (request.unknownOutcome ? ['once'] : ['once', 'session']);
  const target = targetOf(request, data);

  const decide = useCallback(
    async (decision: Decision) => {
      if (busy || readOnly) return;
      setBusy(true);
      setError(undefined);
      try {
        const result = await call(
          keel().approvals.decide(
            decision.decision === 'grant'
              ? {
                  sessionId,
                  requestSeq: request.seq,
                  decision: 'grant',
                  scope: decision.scope,
                  ...(decision.always ? { always: true } : {}),
                }
              : {
                  sessionId,
                  requestSeq: request.seq,
                  decision: 'deny',
                  ...(decision.reason ? { reason: decision.reason } : {}),
                },
          ),
        );
        onDecided({ request, event: result.event, target });
      } catch (failure) {
        setError(describeError(failure));
        setBusy(false);
      }
    },
    [busy, readOnly, sessionId, request, target, onDecided],
  );

  // Shortcuts act on the primary card from anywhere in the window, except while typing in another field.
  const decideRef = useRef(decide);
  decideRef.current = decide;
  const reasonRef = useRef(reason);
  reasonRef.current = reason;
  const sessionAllowed = allowedScopes.includes('session');
  useEffect(() => {
    if (!primary || readOnly) return;
    const onKey = (event: KeyboardEvent) => {
      const wanted = shortcutDecision(event);
      if (!wanted || event.defaultPrevented || document.querySelector('dialog[open]')) return;
      if (wanted === 'session' && !sessionAllowed) return;
      if (!shortcutApplies(wanted, event.target, cardRef.current)) return;
      event.preventDefault();
      const text = reasonRef.current.trim();
      void decideRef.current(
        wanted === 'deny'
          ? text
            ? { decision: 'deny', reason: text }
            : { decision: 'deny' }
          : { decision: 'grant', scope: wanted },
      );
    };
    document.addEventListener('keydown', onKey, true);
    return () => document.removeEventListener('keydown', onKey, true);
  }, [primary, readOnly, sessionAllowed]);

  return (
    <article
      ref={cardRef}
      className={`approval-card${primary ? ' is-primary' : ''}`}
      aria-label={`Approval needed: ${request.tool}`}
      data-request-seq={request.seq}
    >
      <header className="approval-header">
        <span className="approval-icon" aria-hidden="true">
          ⚠
        </span>
        <strong>Approval needed:</strong> <code>{request.tool}</code>
        {target ? (
          <code className="approval-target" title={target}>
            {target}
          </code>
        ) : null}
        {request.unknownOutcome ? (
          <span className="tag tag-warning">outcome of an earlier run unknown</span>
        ) : null}
        <time className="approval-time muted" dateTime={request.at} title={formatDateTime(request.at)}>
          asked {formatClock(request.at)}
        </time>
      </header>
      {request.reason && request.reason !== data?.protectedReason ? (
        <p className="approval-reason">{request.reason}</p>
      ) : null}
      {data?.protectedReason ? (
        <p className="approval-protected" role="note">
          <strong>Protected path.</strong> {data.protectedReason}
        </p>
      ) : null}
      {request.unknownOutcome ? (
        <p className="approval-warning" role="note">
          An earlier run of this call may or may not have happened (Keel stopped while it ran). Allowing runs
          it again; only “Allow once” applies.
        </p>
      ) : null}
      {preview.loading && !data ? <p className="hint">Reading the proposed change…</p> : null}
      {preview.error ? (
        <p className="approval-warning" role="alert">
          The details could not be read ({preview.error}). The arguments as logged are below.{' '}
          <button type="button" className="link-button" onClick={preview.reload}>
            Try again
          </button>
        </p>
      ) : null}
      {data?.file ? <FileChangeDetails file={data.file} tool={request.tool} /> : null}
      {data?.files ? <PatchFilesDetails files={data.files} tool={request.tool} /> : null}
      {data?.command ? <CommandDetails command={data.command} /> : null}
      {(data && !data.file && !data.files && !data.command) || preview.error ? (
        <pre className="tool-args approval-args" aria-label="Arguments">
          {prettyJson(request.arguments)}
        </pre>
      ) : data ? (
        <details className="approval-raw">
          <summary>Arguments as logged</summary>
          <pre className="tool-args" aria-label="Arguments">
            {prettyJson(request.arguments)}
          </pre>
        </details>
      ) : null}
      {error ? (
        <p className="composer-error" role="alert">
          {error}
        </p>
      ) : null}
      <DecisionBar
        // The suggestion arrives with the preview: a fresh bar pre-fills it.
        key={data ? 'previewed' : 'plain'}
        requestSeq={request.seq}
        tool={request.tool}
        allowedScopes={allowedScopes}
        suggested={data?.suggested ?? {}}
        protectedPath={Boolean(data?.protectedReason)}
        disabled={busy || readOnly}
        showShortcuts={primary && !readOnly}
        platform={platform}
        onDecide={(decision) => void decide(decision)}
        reason={reason}
        onReasonChange={setReason}
      />
    </article>
  );
}

import {
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type JSX,
} from 'react';
import type { SessionStatus, TurnOutcome } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { AppContext } from '../../appContext.js';
import { useQuery } from '../../api/useQuery.js';
import { useSubscription } from '../../api/useSubscription.js';
import { ErrorState, LoadingState } from '../../components/States.js';
import { ApprovalPanel } from '../approvals/ApprovalPanel.js';
import { ChangesButton } from '../changes/ChangesButton.js';
import { ChangesView } from '../changes/ChangesView.js';
import { NewTurnWarning } from '../changes/NewTurnWarning.js';
import { CompactionInspector } from '../inspector/CompactionInspector.js';
import { LazyTerminalDock } from '../terminal/LazyTerminalDock.js';
import { commandRunsOf } from '../terminal/runStatus.js';
import { useBackgroundCount } from '../terminal/useBackgroundCount.js';
import { useTerminalDock } from '../terminal/useTerminalDock.js';
import { SurfaceLinks, SurfaceToggles, type MainSurface } from '../trace/SurfaceToggles.js';
import { TraceView } from '../trace/TraceView.js';
import type { SendFiles } from './attachments/useAttachments.js';
import { Composer } from './Composer.js';
import { FooterSplitter } from './FooterSplitter.js';
import { HistoryResult } from './history/HistoryResult.js';
import { useHistoryActions } from './history/useHistoryActions.js';
import { currentPlanOf } from './plan.js';
import { PlanChecklist } from './PlanChecklist.js';
import { sessionTitle } from '../browser/SessionRow.js';
import { SessionHeader } from './SessionHeader.js';
import { seedLiveReply } from './liveReply.js';
import { Transcript } from './Transcript.js';
import { foldTranscript } from './transcriptItems.js';
import { useParentTurn } from './useParentTurn.js';
import { PlanCard } from './planMode/PlanCard.js';
import { PlanModeToggle } from './planMode/PlanModeToggle.js';
import { PRESENT_PLAN_TOOL } from '../../../../main/ipc/contract.js';
import { useTranscript } from './useTranscript.js';
import './subagent.css';

/** Events after which the session's summary (pending approvals, context use, resumability) is re-read. */
const REFRESHING_KINDS = new Set([
  'approval_request',
  'approval_granted',
  'approval_denied',
  'assistant_message',
  'interrupted',
  'compaction',
  'model_changed',
  'reasoning_changed',
  'policy_changed',
  // issue #30: plan mode
  'plan_mode_changed',
  'plan_approved',
  'plan_rejected',
  'error',
]);

/**
 * One session: live transcript, pending approvals, composer (Send / Stop / Resume) and context meter. A
 * subagent session counts as running while its own turn runs inside its parent's running turn: its commands
 * then stream into the terminal and can be killed, as a top-level session's.
 */
export function SessionView({
  sessionId,
  find,
}: {
  sessionId: string;
  /** A search hit's word: the transcript goes to the newest message holding it and marks it. */
  find?: string | undefined;
}): JSX.Element {
  // The transcript's first page is requested before the summary: it is what the user waits to see.
  const transcript = useTranscript(sessionId);
  // session.status pushes seen so far. An answer of sessions.open asked before the newest push is older than
  // it: it must not undo it (asked just before a turn started, it would show the session idle while the turn
  // runs, and a message sent then would be refused as busy). Every change of whether a turn runs is pushed.
  const statusPushes = useRef(0);
  const opened = useQuery(async () => {
    const asked = statusPushes.current;
    return { ...(await call(keel().sessions.open({ sessionId }))), asked };
  }, [sessionId]);
  const items = useMemo(() => foldTranscript(transcript.events), [transcript.events]);
  // The model's todo list: re-derived as events stream in, so the checklist updates with each todo call.
  const plan = useMemo(() => currentPlanOf(items), [items]);
  // A turn of this session itself runs in this process (sessions.open / session.status).
  const [ownTurn, setOwnTurn] = useState(false);
  const [status, setStatus] = useState<SessionStatus>('idle');
  const [outcome, setOutcome] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // Messages sent from here: each one brings the transcript to its bottom to follow the new turn.
  const [sent, setSent] = useState(0);
  const [actionError, setActionError] = useState<string | undefined>();
  const [changesOpen, setChangesOpen] = useState(false);
  const [surface, setSurface] = useState<MainSurface>('transcript');
  const [inspected, setInspected] = useState<number | undefined>();
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const reloadTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const { reload } = opened;

  useEffect(() => {
    if (!opened.data || opened.data.asked !== statusPushes.current) return;
    setOwnTurn(opened.data.running);
    setStatus(opened.data.session.status);
  }, [opened.data]);
  // Opened mid-turn: the reply streamed before this page subscribed is main's, joined with what came since.
  const liveSnapshot = opened.data?.live;
  const seededTurn = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!liveSnapshot || seededTurn.current === liveSnapshot.turnId) return;
    seededTurn.current = liveSnapshot.turnId;
    seedLiveReply(transcript.live, liveSnapshot);
  }, [liveSnapshot, transcript.live]);

  const scheduleReload = useCallback(() => {
    clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(reload, 120);
  }, [reload]);
  useEffect(() => () => clearTimeout(reloadTimer.current), []);

  useSubscription('session.status', (payload) => {
    if (payload.sessionId !== sessionId) return;
    statusPushes.current += 1;
    setOwnTurn(payload.running);
    setStatus(payload.status);
    if (payload.running) setOutcome(undefined);
    else {
      setOutcome(payload.outcome ? describeOutcome(payload.outcome) : undefined);
      scheduleReload();
    }
  });

  useSubscription('event.appended', ({ sessionId: id, event }) => {
    if (id === sessionId && REFRESHING_KINDS.has(event.kind)) scheduleReload();
  });

  // A subagent runs no turn of its own here: its log's status (re-read as its events arrive) says whether
  // its turn is on, and it is live only while the parent's turn, which runs it, runs in this process.
  // A fork's parentId names the session it was forked from: it is not a subagent.
  const forkedFrom = opened.data?.forkedFrom;
  const parentId = forkedFrom ? undefined : opened.data?.session.parentId;
  const parentRunning = useParentTurn(sessionId, parentId, scheduleReload);
  const childLive = parentId !== undefined && parentRunning && status === 'running';
  const running = ownTurn || childLive;
  const navigate = useContext(AppContext)?.navigate;

  const readOnly = opened.data?.readOnly ?? true;
  const pending = opened.data?.pendingApprovals ?? [];
  // Issue #30: a plan waiting is shown as its own card; the approval panel gets the other requests.
  const plans = pending.filter((request) => request.tool === PRESENT_PLAN_TOOL);
  const approvals = pending.filter((request) => request.tool !== PRESENT_PLAN_TOOL);
  // Text given back to the composer (Rewind to here), and requests to open the model switch (/model, /effort).
  const [draft, setDraft] = useState<{ text: string; id: number } | undefined>();
  const [modelSwitchAsked, setModelSwitchAsked] = useState(0);
  // The conversation's least share of the height, set by dragging the handle above an approval (percent).
  const [transcriptShare, setTranscriptShare] = useState<number | undefined>();
  const history = useHistoryActions(
    sessionId,
    !readOnly && !running,
    useCallback((id: string) => navigate?.({ screen: 'session', sessionId: id }), [navigate]),
    reload,
    useCallback((text: string) => setDraft((previous) => ({ text, id: (previous?.id ?? 0) + 1 })), []),
  );
  const commands = useQuery(() => call(keel().commands.list({ sessionId })), [sessionId]);
  const completeMentions = useCallback(
    async (query: string) => (await call(keel().mentions.complete({ sessionId, query }))).mentions,
    [sessionId],
  );
  // The session's earlier prompts for ↑/↓, oldest first.
  const prompts = useMemo(
    () => items.flatMap((item) => (item.type === 'user' ? [item.content] : [])),
    [items],
  );
  const forkedFromTitle = useQuery(
    async () =>
      opened.data?.forkedFrom
        ? sessionTitle(
            (await call(keel().sessions.open({ sessionId: opened.data.forkedFrom.sessionId }))).session,
          )
        : undefined,
    [opened.data?.forkedFrom?.sessionId],
  );

  const send = useCallback(
    async (prompt: string, files: SendFiles = { attachments: [], uploads: [] }) => {
      setBusy(true);
      setActionError(undefined);
      try {
        await call(keel().turns.send({ sessionId, prompt, ...files }));
        setOwnTurn(true);
        setSent((count) => count + 1);
        return true;
      } catch (error) {
        setActionError(describeError(error));
        return false;
      } finally {
        setBusy(false);
      }
    },
    [sessionId],
  );

  const stop = useCallback(async () => {
    setActionError(undefined);
    try {
      await call(keel().turns.stop({ sessionId }));
    } catch (error) {
      setActionError(describeError(error));
    }
  }, [sessionId]);

  const resume = useCallback(async () => {
    setBusy(true);
    setActionError(undefined);
    try {
      await call(keel().turns.resume({ sessionId }));
      setOwnTurn(true);
    } catch (error) {
      setActionError(describeError(error));
    } finally {
      setBusy(false);
    }
  }, [sessionId]);

  const archive = useCallback(async () => {
    if (!opened.data) return;
    try {
      await call(keel().sessions.archive({ sessionId, archived: !opened.data.session.archived }));
      reload();
    } catch (error) {
      setActionError(describeError(error));
    }
  }, [opened.data, reload, sessionId]);

  // Esc stops the running turn, unless something else (a dialog, the search box) used the key.
  useEffect(() => {
    if (!running) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      if (document.querySelector('dialog[open]')) return;
      event.preventDefault();
      void stop();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [running, stop]);

  const focusedFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (opened.data && !opened.data.readOnly && focusedFor.current !== sessionId) {
      focusedFor.current = sessionId;
      inputRef.current?.focus();
    }
  }, [opened.data, sessionId]);

  const commandRuns = useMemo(() => commandRunsOf(items), [items]);
  const dock = useTerminalDock(sessionId, commandRuns, running);
  const backgroundRunning = useBackgroundCount(sessionId, transcript.events, dock.open);
  const showSurface = useCallback((next: MainSurface) => {
    setSurface(next);
    if (next !== 'transcript') setChangesOpen(false);
  }, []);
  const openInspector = useCallback(
    (seq: number) => {
      setInspected(seq);
      showSurface('compactions');
    },
    [showSurface],
  );

  const [commandNotice, setCommandNotice] = useState<string | undefined>();
  const [forkAsked, setForkAsked] = useState(false);
  /** Keel's own `/` commands (main/core/harness/commands.ts), each the action its button elsewhere runs. */
  const runCommand = useCallback(
    (name: string, argument: string) => {
      setActionError(undefined);
      setCommandNotice(undefined);
      const attempt = async (work: () => Promise<string | undefined>) => {
        try {
          setCommandNotice(await work());
        } catch (error) {
          setActionError(describeError(error));
        }
      };
      switch (name) {
        case 'compact':
          return void attempt(async () => {
            const result = await call(keel().compactions.run({ sessionId }));
            reload();
            return result.status === 'compacted'
              ? 'Compacted: the conversation so far is summarized (open Compactions to read it).'
              : `Nothing compacted: ${result.reason}`;
          });
        case 'model':
        case 'effort':
          return setModelSwitchAsked((count) => count + 1);
        case 'fork':
          return setForkAsked(true);
        case 'stop':
          return void stop();
        case 'resume':
          return void resume();
        case 'rename':
          if (argument === '') return setActionError('Type the new title after /rename.');
          return void attempt(async () => {
            await call(keel().sessions.rename({ sessionId, title: argument }));
            reload();
            return undefined;
          });
        case 'trace':
          return showSurface('trace');
        case 'terminal':
          return dock.setOpen(true);
        case 'archive':
          return void archive();
      }
    },
    [sessionId, reload, stop, resume, archive, showSurface, dock],
  );

  const data = opened.data;
  return (
    <section
      className="session-view"
      aria-label="Session"
      style={
        transcriptShare === undefined
          ? undefined
          : ({ '--transcript-min': `${transcriptShare}%` } as CSSProperties)
      }
    >
      {data ? (
        <SessionHeader
          opened={data}
          status={status}
          onArchive={() => void archive()}
          modelSwitchAsked={modelSwitchAsked}
          onChanged={reload}
        >
          <SurfaceToggles
            surface={changesOpen ? 'transcript' : surface}
            onSurface={showSurface}
            compactions={items.filter((item) => item.type === 'compaction').length}
            terminalOpen={dock.open}
            commandRunning={running && commandRuns.some((run) => run.status === 'running' && !run.result)}
            backgroundRunning={backgroundRunning}
            onTerminal={() => dock.setOpen(!dock.open)}
          />
          {data.persistentDirs.length > 0 ? (
            <ChangesButton
              sessionId={sessionId}
              open={changesOpen}
              onToggle={() => setChangesOpen((open) => !open)}
            />
          ) : null}
        </SessionHeader>
      ) : opened.error ? (
        <ErrorState message={opened.error} onRetry={opened.reload} />
      ) : (
        <header className="session-header">
          <LoadingState label="Opening session…" />
        </header>
      )}
      {parentId !== undefined ? (
        <p className="banner subagent-banner" role="status">
          {childLive
            ? 'Subagent session, running inside its parent’s turn: its commands stream here live and can be killed.'
            : 'Subagent session: another session ran it for one task, and got only its final message.'}{' '}
          {navigate ? (
            <button
              type="button"
              className="link-button"
              onClick={() => navigate({ screen: 'session', sessionId: parentId })}
            >
              Open parent session
            </button>
          ) : null}
        </p>
      ) : null}
      {forkedFrom ? (
        <p className="banner fork-banner" role="status">
          {forkedFromTitle.data ? `Forked from “${forkedFromTitle.data}”` : 'Forked from another session'}:
          both go on independently.{' '}
          {navigate ? (
            <button
              type="button"
              className="link-button"
              onClick={() => navigate({ screen: 'session', sessionId: forkedFrom.sessionId })}
            >
              Open the session it was forked from
            </button>
          ) : null}
        </p>
      ) : null}
      {data?.readOnly && !childLive ? (
        <p className="banner banner-warning" role="status">
          {data.session.projectExists
            ? 'Read-only: another Keel process (the CLI or another window) is using this session right now.'
            : `Read-only: the project folder ${data.session.projectFolder} no longer exists. You can read this session but not continue it.`}
        </p>
      ) : null}
      {transcript.error ? <ErrorState message={transcript.error} onRetry={transcript.retry} /> : null}
      {changesOpen ? (
        <ChangesView
          sessionId={sessionId}
          readOnly={readOnly}
          running={running}
          onClose={() => setChangesOpen(false)}
        />
      ) : surface === 'compactions' ? (
        <CompactionInspector
          sessionId={sessionId}
          seq={inspected}
          onSelect={setInspected}
          running={running}
          readOnly={readOnly}
        />
      ) : surface === 'trace' ? (
        <TraceView sessionId={sessionId} />
      ) : transcript.loading ? (
        <LoadingState label="Loading transcript…" />
      ) : (
        <SurfaceLinks inspector={openInspector} terminal={dock.link}>
          <Transcript
            sessionId={sessionId}
            items={items}
            live={transcript.live}
            streaming={transcript.streaming}
            running={running}
            toolOutput={transcript.toolOutput}
            hasBefore={transcript.hasBefore}
            onLoadEarlier={transcript.loadEarlier}
            history={history.actions}
            followKey={sent}
            find={find}
          />
        </SurfaceLinks>
      )}
      {dock.open ? (
        <LazyTerminalDock
          sessionId={sessionId}
          dock={dock}
          runs={commandRuns}
          sessionRunning={running}
          readOnly={readOnly}
        />
      ) : null}
      {data ? (
        <div className="session-footer">
          {pending.length > 0 ? (
            <FooterSplitter value={transcriptShare} onChange={setTranscriptShare} />
          ) : null}
          {transcript.notice && running ? (
            <p className="turn-notice" role="status">
              {transcript.notice}
            </p>
          ) : null}
          {/* Waiting for approval: the card below says so. */}
          {outcome && !running && pending.length === 0 ? (
            <p className="turn-outcome" role="status">
              {outcome}
            </p>
          ) : null}
          {plan ? <PlanChecklist steps={plan.steps} /> : null}
          <HistoryResult state={history.state} onDismiss={history.dismiss} />
          {plans.map((request) => (
            <PlanCard
              key={request.seq}
              sessionId={sessionId}
              request={request}
              policy={data.policy}
              readOnly={readOnly}
              onDecided={() => {
                setOwnTurn(true);
                reload();
              }}
            />
          ))}
          <ApprovalPanel
            sessionId={sessionId}
            pending={approvals}
            readOnly={readOnly}
            running={running}
            onDecided={reload}
          />
          <NewTurnWarning
            sessionId={sessionId}
            hasCheckouts={data.persistentDirs.length > 0}
            running={running}
            onReview={() => setChangesOpen(true)}
          />
          {forkAsked ? (
            <div className="history-actions history-confirm" role="group" aria-label="Fork this session">
              <span>
                Start a new session with this whole conversation (same model and folders)? This one stays.
              </span>
              <button
                type="button"
                className="button-primary"
                onClick={() => {
                  setForkAsked(false);
                  history.actions.fork();
                }}
              >
                Fork
              </button>
              <button type="button" className="button-secondary" onClick={() => setForkAsked(false)}>
                Cancel
              </button>
            </div>
          ) : null}
          {commandNotice ? (
            <p className="turn-outcome" role="status">
              {commandNotice}
            </p>
          ) : null}
          <Composer
            {...(data.toolMode === 'write' && parentId === undefined
              ? {
                  modeControl: (
                    <PlanModeToggle
                      sessionId={sessionId}
                      active={data.planMode === true}
                      disabled={readOnly || running || plans.length > 0}
                      inputRef={inputRef}
                      onChanged={reload}
                    />
                  ),
                }
              : {})}
            inputRef={inputRef}
            history={prompts}
            draft={draft}
            commands={commands.data?.commands ?? []}
            onCommand={runCommand}
            completeMentions={completeMentions}
            running={running}
            readOnly={readOnly}
            {...(childLive
              ? {
                  readOnlyHint:
                    'A subagent takes no messages while its parent’s turn runs it. Stop (or Esc) ends this subagent only.',
                }
              : {})}
            canResume={data.canResume}
            awaitingApproval={pending.length > 0}
            busy={busy}
            error={actionError}
            onSend={send}
            {...(opened.data ? { model: opened.data.session } : {})}
            onStop={() => void stop()}
            onResume={() => void resume()}
          />
        </div>
      ) : null}
    </section>
  );
}

/** A sentence for how a turn ended, or nothing when it simply completed. */
function describeOutcome(outcome: TurnOutcome): string | undefined {
  switch (outcome.status) {
    case 'completed':
      return undefined;
    case 'awaiting_approval':
      return 'The turn is waiting for your approval.';
    case 'interrupted':
      return 'Stopped. Resume continues from where it was cut, or send a new message.';
    case 'failed':
      return `The turn failed: ${outcome.error}`;
    case 'budget_exhausted':
      return `The turn stopped after ${outcome.steps} steps (its step budget). Resume to continue.`;
    case 'budget_reached':
      return outcome.message;
  }
}

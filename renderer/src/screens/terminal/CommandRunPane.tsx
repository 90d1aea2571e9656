import { useEffect, useRef, useState, type JSX } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { formatDuration } from '../trace/traceFormat.js';
import type { OutputRouter } from './outputRouter.js';
import { commandOf, excerptOf, runStatusOf, type DockRunInfo } from './runStatus.js';
import { useXterm } from './useXterm.js';

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/**
 * One command run in a terminal: its live output while it runs (from the router, acked as xterm renders
 * it, so a flood slows the command instead of the page), or its replay once finished (the output this page
 * saw live, else the excerpt the log keeps); its status, exit, duration and limit kills; Kill while it runs.
 */
export function CommandRunPane({
  sessionId,
  run,
  router,
  sessionRunning,
  visible,
}: {
  sessionId: string;
  run: DockRunInfo;
  router: OutputRouter;
  sessionRunning: boolean;
  visible: boolean;
}): JSX.Element {
  const xterm = useXterm({ input: false });
  const { terminal } = xterm;
  const status = runStatusOf(run, sessionRunning);
  const [killing, setKilling] = useState(false);
  const [killError, setKillError] = useState<string | undefined>();
  const live = useRef(false);
  const wroteEnd = useRef(false);
  const command = commandOf(run.arguments);

  // Live (or seen-live) output: the backlog, then every chunk as it comes, acked when rendered.
  useEffect(() => {
    if (!terminal) return;
    const seenLive = router.hasOutput(run.toolCallId);
    if (run.result && !seenLive) return;
    live.current = true;
    const attached = router.attach(run.toolCallId, (chunk, rendered) => terminal.write(chunk, rendered));
    if (attached.truncated) terminal.write(`${DIM}[… earlier output not kept here]${RESET}\r\n`);
    if (attached.backlog) terminal.write(attached.backlog);
    return attached.detach;
  }, [terminal, router, run.toolCallId]);

  // A finished run not seen live: replay what the log keeps of it.
  useEffect(() => {
    if (!terminal || !run.result || live.current) return;
    const { text, notes } = excerptOf(run.result.content);
    terminal.write(text === '(no output)' ? `${DIM}(no output)${RESET}` : text);
    terminal.write(
      `\r\n${DIM}── ${notes.join(' ')}${
        run.result.artifact
          ? `\r\n── This is the excerpt the model got (head and tail). The whole output is kept as artifact ${run.result.artifact}.`
          : ''
      }${RESET}\r\n`,
    );
    wroteEnd.current = true;
  }, [terminal, run.result]);

  // The end of a run watched live: its status line under the output.
  useEffect(() => {
    if (!terminal || !run.result || !live.current || wroteEnd.current) return;
    wroteEnd.current = true;
    terminal.write(
      `\r\n${DIM}── ${status.label}${status.durationMs !== undefined ? ` · ${formatDuration(status.durationMs)}` : ''}${RESET}\r\n`,
    );
  }, [terminal, run.result, status.label, status.durationMs]);

  useEffect(() => {
    if (visible) xterm.fit();
  }, [visible]);

  const kill = async () => {
    setKilling(true);
    setKillError(undefined);
    try {
      await call(keel().commands.kill({ sessionId, toolCallId: run.toolCallId }));
    } catch (error) {
      setKillError(describeError(error));
    } finally {
      setKilling(false);
    }
  };

  return (
    <section className="run-pane" aria-label={`Command ${command}`} data-tool-call-id={run.toolCallId}>
      <header className="run-pane-header">
        <code className="run-pane-command" title={command}>
          $ {command}
        </code>
        <span className={`run-state run-state-${status.state}`} data-state={status.state} role="status">
          {status.state === 'running' ? <span className="pulse" aria-hidden="true" /> : null}
          {status.label}
        </span>
        {status.durationMs !== undefined ? (
          <span className="run-pane-meta">{formatDuration(status.durationMs)}</span>
        ) : null}
        {status.state === 'running' ? (
          <button
            type="button"
            className="button-danger run-kill"
            onClick={() => void kill()}
            disabled={killing}
          >
            {killing ? 'Killing…' : 'Kill'}
          </button>
        ) : null}
      </header>
      {killError ? (
        <p className="run-pane-error" role="alert">
          {killError}
        </p>
      ) : null}
      <div className="xterm-host" ref={xterm.ref} data-testid="run-terminal" />
    </section>
  );
}

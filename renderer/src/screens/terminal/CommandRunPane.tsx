import { useEffect, useRef, useState, type JSX } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import type { Terminal } from '@xterm/xterm';
import { formatDuration } from '../trace/traceFormat.js';
import type { OutputRouter } from './outputRouter.js';
import { commandOf, excerptOf, runStatusOf, type DockRunInfo } from './runStatus.js';
import { useXterm } from './useXterm.js';

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** Above this size only the artifact's tail is replayed (the terminal keeps 10,000 lines anyway). */
const REPLAY_TAIL_BYTES = 2 * 1024 * 1024;
const PAGE_BYTES = 512 * 1024;

/**
 * Writes a finished run's output into `terminal`: its artifact page by page (each page once xterm parsed the
 * previous one), only the tail of a large one; the excerpt the model got when there is no artifact or it
 * cannot be read. Stops when `cancelled()` turns true.
 */
async function replayRun(
  terminal: Terminal,
  sessionId: string,
  result: NonNullable<DockRunInfo['result']>,
  cancelled: () => boolean,
): Promise<void> {
  const written = (text: string) => new Promise<void>((resolve) => terminal.write(text, resolve));
  const handle = result.artifact;
  if (handle) {
    const read = (offset: number) =>
      call(keel().artifacts.read({ sessionId, handle, offset, maxBytes: PAGE_BYTES }));
    try {
      let page = await read(0);
      if (page.size > REPLAY_TAIL_BYTES) {
        const skipped = page.size - REPLAY_TAIL_BYTES;
        page = await read(skipped);
        // The tail starts mid-line (maybe mid-character): from the next line on.
        const newline = page.text.indexOf('\n');
        page = {
          ...page,
          text: newline >= 0 ? page.text.slice(newline + 1) : page.text.replace(/^\uFFFD+/, ''),
        };
        await written(
          `${DIM}[… the first ${(skipped / 1024 / 1024).toFixed(1)} MB are not shown; the whole output is artifact ${handle}]${RESET}\r\n`,
        );
      }
      if (page.size === 0) await written(`${DIM}(no output)${RESET}\r\n`);
      for (;;) {
        if (cancelled()) return;
        if (page.text) await written(page.text);
        if (page.eof || page.nextOffset <= page.offset) return;
        page = await read(page.nextOffset);
      }
    } catch (error) {
      if (cancelled()) return;
      await written(
        `${DIM}[artifact ${handle} could not be read (${describeError(error)}); the excerpt the model got:]${RESET}\r\n`,
      );
    }
  }
  const { text } = excerptOf(result.content);
  await written(text === '(no output)' ? `${DIM}(no output)${RESET}\r\n` : `${text}\r\n`);
  await written(`${DIM}── This is the excerpt the model got (head and tail).${RESET}\r\n`);
}

/**
 * One command run in a terminal: its live output while it runs (from the router, acked as xterm renders
 * it, so a flood slows the command instead of the page), or its replay once finished (the output this page
 * saw live, else its artifact, else the excerpt the log keeps); its status, exit, duration and limit kills; Kill while it runs.
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
  // How this pane got its output: streamed (live or seen live), or replayed once finished.
  const mode = useRef<'live' | 'replay' | undefined>(undefined);
  const [replayed, setReplayed] = useState(false);
  const wroteEnd = useRef(false);
  const command = commandOf(run.arguments);

  // Live (or seen-live) output: the backlog, then every chunk as it comes, acked when rendered.
  useEffect(() => {
    if (!terminal) return;
    const seenLive = router.hasOutput(run.toolCallId);
    if (run.result && !seenLive) return;
    mode.current = 'live';
    const attached = router.attach(run.toolCallId, (chunk, rendered) => terminal.write(chunk, rendered));
    if (attached.truncated) terminal.write(`${DIM}[… earlier output not kept here]${RESET}\r\n`);
    if (attached.backlog) terminal.write(attached.backlog);
    return attached.detach;
  }, [terminal, router, run.toolCallId]);

  // A finished run not seen live: replay its artifact (the whole output, colours included), else the excerpt.
  const resultSeq = run.result?.seq;
  const resultRef = useRef(run.result);
  resultRef.current = run.result;
  useEffect(() => {
    const result = resultRef.current;
    if (!terminal || !result || mode.current) return;
    let cancelled = false;
    let done = false;
    mode.current = 'replay';
    void replayRun(terminal, sessionId, result, () => cancelled).then(() => {
      done = true;
      if (!cancelled) setReplayed(true);
    });
    return () => {
      cancelled = true;
      // Interrupted half-way (the terminal went away, or a remount): the next run starts from a clean screen.
      if (!done) {
        mode.current = undefined;
        try {
          terminal.reset();
        } catch {
          // Already disposed (the pane is unmounting): nothing to clean.
        }
      }
    };
  }, [terminal, resultSeq, sessionId]);

  // The end of a run watched live (or replayed): its status line under the output.
  useEffect(() => {
    if (!terminal || resultSeq === undefined || !mode.current || wroteEnd.current) return;
    if (mode.current === 'replay' && !replayed) return;
    wroteEnd.current = true;
    const line = `${DIM}── ${status.label}${status.durationMs !== undefined ? ` · ${formatDuration(status.durationMs)}` : ''}${RESET}\r\n`;
    // After everything already written is parsed: a new line only if the output did not end with one.
    terminal.write('', () => terminal.write(terminal.buffer.active.cursorX === 0 ? line : `\r\n${line}`));
  }, [terminal, resultSeq, status.label, status.durationMs, replayed]);

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

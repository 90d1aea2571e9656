import { useEffect, useRef, useState, type JSX } from 'react';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { send } from './send.js';
import { useSubscription } from '../../api/useSubscription.js';
import { AckBatcher } from './outputRouter.js';
import type { DockTab } from './useTerminalDock.js';
import { useXterm } from './useXterm.js';

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

type ShellTab = Extract<DockTab, { kind: 'shell' }>;

/**
 * The user's interactive shell in the session's workspace, inside the same box as the agent's commands:
 * keystrokes go to terminal.write, output comes from terminal.data (acked as xterm renders it), the pty
 * follows the pane's size. Closing the tab kills the shell and everything it started.
 */
export function ShellPane({
  sessionId,
  tab,
  visible,
  onTerminal,
}: {
  sessionId: string;
  tab: ShellTab;
  visible: boolean;
  onTerminal: (key: string, terminalId: string | undefined) => void;
}): JSX.Element {
  const terminalId = useRef<string | undefined>(tab.terminalId);
  const early = useRef<{ terminalId: string; chunk: string }[]>([]);
  const [state, setState] = useState<{
    kind: 'opening' | 'open' | 'exited' | 'failed';
    text?: string;
    cwd?: string;
  }>(tab.terminalId ? { kind: 'open' } : { kind: 'opening' });
  const [unconfinedOffer, setUnconfinedOffer] = useState(false);
  const resizeTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const xterm = useXterm({
    input: true,
    onResize: (cols, rows) => {
      clearTimeout(resizeTimer.current);
      resizeTimer.current = setTimeout(() => {
        const id = terminalId.current;
        if (id) send(keel().terminal.resize({ terminalId: id, cols, rows }));
      }, 80);
    },
  });
  const { terminal } = xterm;
  const acks = useRef<AckBatcher | undefined>(undefined);

  const write = (chunk: string) => {
    const id = terminalId.current;
    if (!terminal || !id) return;
    acks.current ??= new AckBatcher((chars) => send(keel().terminal.ack({ terminalId: id, chars })));
    const batcher = acks.current;
    terminal.write(chunk, () => batcher.add(chunk.length));
  };

  useSubscription('terminal.data', (payload) => {
    if (payload.sessionId !== sessionId) return;
    if (terminalId.current === undefined) early.current.push(payload);
    else if (payload.terminalId === terminalId.current) write(payload.chunk);
  });
  useSubscription('terminal.exit', (payload) => {
    if (payload.terminalId !== terminalId.current) return;
    acks.current?.dispose();
    terminal?.write(
      `\r\n${DIM}── ${payload.killed ? 'closed' : `exited${payload.exitCode !== null ? ` with code ${payload.exitCode}` : ''}${payload.signal ? ` (${payload.signal})` : ''}`}${RESET}\r\n`,
    );
    setState({ kind: 'exited' });
  });

  const openShell = async (unconfined: boolean) => {
    if (!terminal) return;
    setState({ kind: 'opening' });
    const size = xterm.fit() ?? { cols: 100, rows: 24 };
    try {
      const opened = await call(
        keel().terminal.open({ sessionId, cols: size.cols, rows: size.rows, unconfined }),
      );
      terminalId.current = opened.terminalId;
      acks.current = undefined;
      onTerminal(tab.key, opened.terminalId);
      setState({ kind: 'open', cwd: opened.cwd });
      const queued = early.current.filter((item) => item.terminalId === opened.terminalId);
      early.current = [];
      for (const item of queued) write(item.chunk);
      terminal.focus();
    } catch (error) {
      setState({ kind: 'failed', text: describeError(error) });
      setUnconfinedOffer(/sandbox|unconfined|confine/i.test(describeError(error)));
    }
  };

  useEffect(() => {
    if (!terminal) return;
    const input = terminal.onData((data) => {
      const id = terminalId.current;
      if (id) send(keel().terminal.write({ terminalId: id, data }));
    });
    if (tab.terminalId) {
      // Reattached: what it printed while no terminal showed it is gone; release anything it waits on.
      terminal.write(
        `${DIM}[reattached to a shell opened earlier; its earlier output is not shown]${RESET}\r\n`,
      );
      send(keel().terminal.ack({ terminalId: tab.terminalId, chars: 10_000_000 }));
      const size = xterm.fit();
      if (size) send(keel().terminal.resize({ terminalId: tab.terminalId, ...size }));
    } else void openShell(false);
    return () => input.dispose();
  }, [terminal]);

  // The dock kills the shell when its tab is closed; unmounting alone (leaving the session) keeps it running.
  useEffect(
    () => () => {
      clearTimeout(resizeTimer.current);
      acks.current?.flush();
    },
    [],
  );

  useEffect(() => {
    if (visible && terminal) {
      xterm.fit();
      terminal.focus();
    }
  }, [visible, terminal]);

  return (
    <section className="shell-pane" aria-label={`Shell ${tab.number}`}>
      <header className="run-pane-header">
        <code className="run-pane-command">
          Shell {tab.number}
          {state.cwd ? ` · ${state.cwd}` : ''}
        </code>
        <span
          className={`run-state run-state-${state.kind === 'open' ? 'running' : state.kind === 'failed' ? 'failed' : 'waiting'}`}
          role="status"
        >
          {state.kind === 'opening'
            ? 'Opening…'
            : state.kind === 'open'
              ? 'In the box'
              : state.kind === 'exited'
                ? 'Exited'
                : 'Could not open'}
        </span>
        {state.kind === 'exited' || state.kind === 'failed' ? (
          <button type="button" className="button-secondary" onClick={() => void openShell(false)}>
            New shell here
          </button>
        ) : null}
      </header>
      {state.kind === 'failed' ? (
        <div className="run-pane-error" role="alert">
          {state.text}
          {unconfinedOffer ? (
            <button
              type="button"
              className="link-button"
              onClick={() => {
                if (
                  window.confirm(
                    'Open a shell with no sandbox? It can read and write anything your user can.',
                  )
                ) {
                  void openShell(true);
                }
              }}
            >
              Open it without a sandbox
            </button>
          ) : null}
        </div>
      ) : null}
      <div className="xterm-host" ref={xterm.ref} data-testid="shell-terminal" />
    </section>
  );
}

import { memo, type JSX } from 'react';
import { keel } from '../../api/keel.js';
import { BackgroundCommands } from './BackgroundCommands.js';
import { send } from './send.js';
import { CommandRunPane } from './CommandRunPane.js';
import { commandOf, runStatusOf, type DockRunInfo } from './runStatus.js';
import { ShellPane } from './ShellPane.js';
import type { TerminalDock as DockState } from './useTerminalDock.js';

/**
 * The terminal dock under the transcript: a tab per command run (live or replayed) and per interactive
 * shell. Every tab stays mounted while the dock is open, so a hidden run keeps rendering and acking its
 * output and a hidden shell keeps its screen.
 */
export const TerminalDock = memo(function TerminalDock({
  sessionId,
  dock,
  runs,
  sessionRunning,
  readOnly,
}: {
  sessionId: string;
  dock: DockState;
  runs: readonly DockRunInfo[];
  sessionRunning: boolean;
  readOnly: boolean;
}): JSX.Element {
  const byId = new Map(runs.map((run) => [run.toolCallId, run]));
  const close = (key: string) => {
    const tab = dock.tabs.find((candidate) => candidate.key === key);
    if (tab?.kind === 'shell' && tab.terminalId) send(keel().terminal.kill({ terminalId: tab.terminalId }));
    dock.closeTab(key);
  };
  return (
    <section className="terminal-dock" aria-label="Terminals">
      <div className="dock-bar">
        <div className="dock-tabs" role="tablist" aria-label="Terminal tabs">
          {dock.tabs.map((tab) => {
            const run = tab.kind === 'run' ? byId.get(tab.toolCallId) : undefined;
            const label =
              tab.kind === 'run'
                ? `$ ${run ? commandOf(run.arguments) : tab.toolCallId}`
                : `Shell ${tab.number}`;
            const state = run
              ? runStatusOf(run, sessionRunning).state
              : tab.kind === 'shell'
                ? 'shell'
                : 'unknown';
            return (
              <div key={tab.key} className={`dock-tab${tab.key === dock.active ? ' is-current' : ''}`}>
                <button
                  type="button"
                  role="tab"
                  aria-selected={tab.key === dock.active}
                  className="dock-tab-label"
                  title={label}
                  onClick={() => dock.setActive(tab.key)}
                >
                  <span className={`dock-dot dock-dot-${state}`} aria-hidden="true" />
                  {label}
                </button>
                <button
                  type="button"
                  className="dock-tab-close"
                  aria-label={`Close ${label}`}
                  onClick={() => close(tab.key)}
                >
                  ×
                </button>
              </div>
            );
          })}
        </div>
        <button
          type="button"
          className="link-button"
          onClick={dock.openShell}
          disabled={readOnly}
          title={
            readOnly
              ? 'This session is read-only here'
              : "A shell in the session's checkout, in the same box as commands"
          }
        >
          + Shell
        </button>
        <button
          type="button"
          className="dock-close"
          aria-label="Close terminals"
          onClick={() => dock.setOpen(false)}
        >
          ×
        </button>
      </div>
      <BackgroundCommands sessionId={sessionId} />
      <div className="dock-panes">
        {dock.tabs.length === 0 ? (
          <p className="dock-empty muted">
            Command runs show here live when the agent runs them (open one from its card in the transcript),
            and “+ Shell” opens your own shell in the session&apos;s box.
          </p>
        ) : null}
        {dock.tabs.map((tab) => {
          const visible = tab.key === dock.active;
          if (tab.kind === 'shell') {
            return (
              <div
                key={tab.key}
                className={`dock-pane${visible ? '' : ' is-hidden'}`}
                role="tabpanel"
                aria-hidden={!visible}
              >
                <ShellPane
                  sessionId={sessionId}
                  tab={tab}
                  visible={visible}
                  onTerminal={dock.setShellTerminal}
                />
              </div>
            );
          }
          const run = byId.get(tab.toolCallId);
          return (
            <div
              key={tab.key}
              className={`dock-pane${visible ? '' : ' is-hidden'}`}
              role="tabpanel"
              aria-hidden={!visible}
            >
              {run ? (
                <CommandRunPane
                  sessionId={sessionId}
                  run={run}
                  router={dock.router}
                  sessionRunning={sessionRunning}
                  visible={visible}
                />
              ) : (
                <p className="dock-empty muted">
                  This command run is not in the loaded part of the transcript.
                </p>
              )}
            </div>
          );
        })}
      </div>
    </section>
  );
});

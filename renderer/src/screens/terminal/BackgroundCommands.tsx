import { useEffect, useState, type JSX } from 'react';
import type { BackgroundCommand } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

/** How often the dock asks for the session's background commands while it is open (their output tail is live). */
const POLL_MS = 1000;
/** Lines of each command's latest output shown. */
const TAIL_LINES = 6;

/**
 * The session's background commands in the terminal dock (issue #32): what runs after the call that started it
 * returned (a dev server, a watcher) with its handle, pid, state (running, or how it ended, also for one lost with
 * a Keel that ended) and its latest output, polled while the dock is open; Stop ends one and its whole tree.
 * Nothing is shown while the session has none.
 */
export function BackgroundCommands({ sessionId }: { sessionId: string }): JSX.Element | null {
  const [commands, setCommands] = useState<readonly BackgroundCommand[]>([]);
  const [problem, setProblem] = useState<string | undefined>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    const load = () =>
      call(keel().background.list({ sessionId })).then(
        (listed) => live && setCommands(listed.commands),
        () => undefined,
      );
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [sessionId, tick]);

  if (commands.length === 0) return null;
  const stop = async (handle: string) => {
    setProblem(undefined);
    try {
      await call(keel().background.stop({ sessionId, handle }));
    } catch (error) {
      setProblem(describeError(error));
    }
    setTick((n) => n + 1);
  };
  return (
    <section className="dock-background" aria-label="Background commands">
      {problem ? (
        <p className="dock-background-problem" role="alert">
          {problem}
        </p>
      ) : null}
      <ul>
        {commands.map((command) => (
          <li
            key={command.handle}
            className="dock-background-item"
            aria-label={`Background command ${command.handle}`}
          >
            <div className="dock-background-head">
              <span
                className={`dock-dot dock-dot-${command.state === 'running' ? 'running' : 'stopped'}`}
                aria-hidden="true"
              />
              <code className="dock-background-command" title={command.command}>
                $ {command.command}
              </code>
              <span className="dock-background-meta">
                {command.handle}
                {command.pid !== null ? ` · pid ${command.pid}` : ''} ·{' '}
                <span data-testid="background-state">
                  {command.state === 'running' ? 'running' : (command.ended ?? 'ended')}
                </span>
              </span>
              {command.state === 'running' ? (
                <button
                  type="button"
                  className="button-secondary dock-background-stop"
                  onClick={() => void stop(command.handle)}
                >
                  Stop {command.handle}
                </button>
              ) : null}
            </div>
            {command.tail.trim() !== '' ? (
              <pre className="dock-background-tail">
                {command.tail.replace(/\n+$/, '').split('\n').slice(-TAIL_LINES).join('\n')}
              </pre>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

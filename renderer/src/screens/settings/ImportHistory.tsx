import { useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';

type Tool = 'claude-code' | 'codex';
type Report = ChannelOutput<'imports.scan'>;

const TOOL_NAMES: Record<Tool, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

/**
 * Settings → Import history (issue 35): another tool's sessions found at its default location, per project
 * (sessions, messages, what is new), an Import button per project (the folder the user picks here is the one
 * its sessions may run in), a progress bar while it runs, then what was imported and what was skipped and why.
 * The same core function as `keel import --from` (imports.scan is its dry run).
 */
export function ImportHistory(): JSX.Element {
  const [tool, setTool] = useState<Tool>('claude-code');
  const [found, setFound] = useState<Report | undefined>();
  const [scanning, setScanning] = useState(false);
  const [running, setRunning] = useState<string | undefined>();
  const [progress, setProgress] = useState<{ done: number; total: number } | undefined>();
  const [summary, setSummary] = useState<Report | undefined>();
  const [error, setError] = useState<string | undefined>();

  useSubscription('imports.progress', (payload) => {
    if (payload.tool === tool) setProgress({ done: payload.done, total: payload.total });
  });

  const scan = async (which: Tool = tool) => {
    setScanning(true);
    setError(undefined);
    try {
      setFound(await call(keel().imports.scan({ tool: which })));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setScanning(false);
    }
  };

  const run = async (project: string) => {
    setRunning(project);
    setProgress(undefined);
    setSummary(undefined);
    setError(undefined);
    try {
      setSummary(await call(keel().imports.run({ tool, project })));
      await scan();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setRunning(undefined);
    }
  };

  return (
    <section className="import-history" aria-labelledby="import-history-title">
      <h2 id="import-history-title">Import history</h2>
      <p className="hint">
        Sessions of another tool become Keel sessions: listed by project, searchable, and continued here in
        the project you import them for. They bring no approvals, rules or network; tool output is redacted.
      </p>
      <label>
        From{' '}
        <select
          aria-label="Import from"
          value={tool}
          onChange={(event) => {
            setTool(event.target.value as Tool);
            setFound(undefined);
            setSummary(undefined);
          }}
        >
          {(Object.keys(TOOL_NAMES) as Tool[]).map((t) => (
            <option key={t} value={t}>
              {TOOL_NAMES[t]}
            </option>
          ))}
        </select>
      </label>{' '}
      <button type="button" onClick={() => void scan()} disabled={scanning || running !== undefined}>
        {scanning ? 'Looking…' : found ? 'Look again' : 'Find sessions'}
      </button>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {found ? (
        <>
          <p>
            {found.found} session files in <code>{found.root}</code>
          </p>
          {found.projects.length > 0 ? (
            <table aria-label="Sessions found per project">
              <thead>
                <tr>
                  <th>Project</th>
                  <th>Sessions</th>
                  <th>Messages</th>
                  <th>New</th>
                  <th>Grown</th>
                  <th>Already here</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {found.projects.map((p) => (
                  <tr key={p.project}>
                    <td>
                      <code>{p.project || '(no folder recorded)'}</code>
                    </td>
                    <td>{p.sessions}</td>
                    <td>{p.messages}</td>
                    <td>{p.new}</td>
                    <td>{p.grown}</td>
                    <td>{p.unchanged}</td>
                    <td>
                      {p.project && p.new + p.grown + p.records > 0 ? (
                        <button
                          type="button"
                          aria-label={`Import ${p.project}`}
                          onClick={() => void run(p.project)}
                          disabled={running !== undefined}
                        >
                          {running === p.project ? 'Importing…' : 'Import'}
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
      {running !== undefined ? (
        <progress aria-label="Import progress" max={progress?.total ?? 1} value={progress?.done ?? 0} />
      ) : null}
      {summary ? (
        <div role="status" aria-label="Import summary">
          <p>
            Imported {summary.imported.length} sessions (
            {summary.imported.filter((s) => s.status === 'new').length} new,{' '}
            {summary.imported.filter((s) => s.status === 'grown').length} with a new part).
          </p>
          {summary.skipped.length > 0 ? (
            <ul>
              {summary.skipped.map((s) => (
                <li key={s.reason}>
                  Skipped {s.count}: {s.reason}
                </li>
              ))}
            </ul>
          ) : null}
          {summary.problemCount > 0 ? (
            <details>
              <summary>{summary.problemCount} lines could not be read</summary>
              <ul>
                {summary.problems.map((p) => (
                  <li key={p}>
                    <code>{p}</code>
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

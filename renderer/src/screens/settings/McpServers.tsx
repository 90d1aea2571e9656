import { useEffect, useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type McpView = ChannelOutput<'mcp.servers'>;
type ToolRule = ChannelOutput<'mcp.rules'>['rules'][number];

/**
 * MCP servers: settings.json's (every project) and the chosen project's `.mcp.json` (the most recently used
 * project by default), checked on request, since checking starts each one in the box; each server's state
 * (failed with its error and stderr tail) and its tools, each switchable; the project file's trust state and
 * an Approve button for a file not approved as it is (the same approval as `keel mcp approve`); while a
 * check runs, the servers last seen show as starting. Below, the project's tool rules (MCP tools allowed
 * "in this project" from an approval), each revocable.
 */
export function McpServers(): JSX.Element {
  const [view, setView] = useState<McpView | undefined>();
  const [checking, setChecking] = useState(false);
  const [approving, setApproving] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [projects, setProjects] = useState<string[]>([]);
  const [folder, setFolder] = useState<string>('');
  const [rules, setRules] = useState<ToolRule[] | undefined>();
  const [revoking, setRevoking] = useState<string | undefined>();

  useEffect(() => {
    if (!folder) return;
    let live = true;
    setRules(undefined);
    call(keel().mcp.rules({ folder }))
      .then((result) => live && setRules(result.rules))
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, [folder]);

  const revokeRule = async (tool: string) => {
    setRevoking(tool);
    setError(undefined);
    try {
      setRules((await call(keel().mcp.revokeRule({ folder, tool }))).rules);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setRevoking(undefined);
    }
  };

  useEffect(() => {
    let live = true;
    call(keel().projects.recent({}))
      .then(({ projects: recent }) => {
        if (!live) return;
        const folders = recent.filter((p) => p.exists).map((p) => p.folder);
        setProjects(folders);
        setFolder((current) => current || (folders[0] ?? ''));
      })
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, []);

  const check = async () => {
    setChecking(true);
    setError(undefined);
    try {
      setView(await call(keel().mcp.servers(folder ? { folder } : {})));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setChecking(false);
    }
  };

  const approve = async () => {
    if (!folder) return;
    setApproving(true);
    setError(undefined);
    try {
      await call(keel().mcp.approveProject({ folder }));
      // Approved: its servers can start now; checking again shows them.
      await check();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setApproving(false);
    }
  };

  const toggle = async (tool: string, enabled: boolean) => {
    try {
      const { disabledTools } = await call(keel().mcp.setToolEnabled({ tool, enabled }));
      setView((current) =>
        current
          ? {
              ...current,
              servers: current.servers.map((server) => ({
                ...server,
                tools: server.tools.map((t) => ({ ...t, enabled: !disabledTools.includes(t.name) })),
              })),
            }
          : current,
      );
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  return (
    <section className="mcp-servers" aria-labelledby="mcp-title">
      <h2 id="mcp-title">MCP servers</h2>
      <p className="hint">
        Servers in settings.json run for every project, inside the box. A project’s own .mcp.json runs once
        you approve it here (or with keel mcp approve --project DIR); a changed file asks again. Switched-off
        tools leave the tool list from the next turn.
      </p>
      {projects.length > 0 ? (
        <label className="mcp-project-picker">
          Project{' '}
          <select
            aria-label="MCP project folder"
            value={folder}
            onChange={(event) => {
              setFolder(event.target.value);
              setView(undefined);
            }}
          >
            {projects.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      ) : null}{' '}
      <button type="button" onClick={() => void check()} disabled={checking}>
        {checking ? 'Starting servers…' : view ? 'Check again' : 'Check servers'}
      </button>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {view?.project && view.project.status !== 'absent' ? (
        <article className="mcp-project" aria-label="Project MCP config">
          <h3>
            <code>{view.project.file}</code>{' '}
            <span className={`tag ${view.project.status === 'trusted' ? 'tag-ok' : 'tag-warning'}`}>
              {view.project.status === 'trusted'
                ? 'approved'
                : view.project.status === 'untrusted'
                  ? 'not approved'
                  : 'invalid'}
            </span>
          </h3>
          {view.project.error ? <p className="form-error">{view.project.error}</p> : null}
          {view.project.servers.length > 0 ? <p>Servers: {view.project.servers.join(', ')}</p> : null}
          {view.project.status === 'untrusted' ? (
            <>
              <p className="hint">
                Its servers do not start until you approve this file as it is now. Review it first: they run
                with the project visible (read-only) inside the box.
              </p>
              <button type="button" onClick={() => void approve()} disabled={approving || checking}>
                {approving ? 'Approving…' : 'Approve'}
              </button>
            </>
          ) : null}
        </article>
      ) : null}
      {view && view.servers.length === 0 ? <p>No MCP servers are configured.</p> : null}
      {view?.servers.map((server) => {
        // While a check runs, the servers last seen are being started again.
        const state = checking ? 'starting' : server.state;
        return (
          <article key={server.name} className="mcp-server" aria-label={`MCP server ${server.name}`}>
            <h3>
              {server.name}{' '}
              <span
                className={`tag ${state === 'ready' ? 'tag-ok' : state === 'starting' ? '' : 'tag-warning'}`}
              >
                {state}
              </span>{' '}
              <span className="hint">
                {server.transport}, {server.source}
              </span>
            </h3>
            {server.error ? <p className="form-error">{server.error}</p> : null}
            {server.stderrTail ? <pre className="mcp-stderr">{server.stderrTail}</pre> : null}
            <ul className="mcp-tools">
              {server.tools.map((tool) => (
                <li key={tool.name}>
                  <label>
                    <input
                      type="checkbox"
                      checked={tool.enabled}
                      onChange={(event) => void toggle(tool.name, event.target.checked)}
                    />{' '}
                    <code>{tool.name}</code>
                  </label>
                </li>
              ))}
            </ul>
          </article>
        );
      })}
      {folder ? (
        <article className="mcp-rules" aria-label="Tool rules">
          <h3>Tools allowed in this project</h3>
          <p className="hint">
            MCP tools you allowed with “Always allow … in this project”: they run without asking in every
            session of {folder}. Revoked, they ask again from the next turn.
          </p>
          {rules === undefined ? null : rules.length === 0 ? (
            <p>No tool rules for this project.</p>
          ) : (
            <ul className="mcp-tools">
              {rules.map((rule) => (
                <li key={rule.tool}>
                  <code>{rule.tool}</code>{' '}
                  <span className="hint">
                    since {rule.addedAt} ({rule.via})
                  </span>{' '}
                  <button
                    type="button"
                    aria-label={`Revoke ${rule.tool}`}
                    disabled={revoking !== undefined}
                    onClick={() => void revokeRule(rule.tool)}
                  >
                    {revoking === rule.tool ? 'Revoking…' : 'Revoke'}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </article>
      ) : null}
    </section>
  );
}

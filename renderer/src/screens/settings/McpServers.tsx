import { useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type McpView = ChannelOutput<'mcp.servers'>;

/**
 * MCP servers (settings.json's, for every project): checked on request, since checking starts each one in
 * the box; each server's state (failed with its error and stderr tail) and its tools, each switchable.
 */
export function McpServers(): JSX.Element {
  const [view, setView] = useState<McpView | undefined>();
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const check = async () => {
    setChecking(true);
    setError(undefined);
    try {
      setView(await call(keel().mcp.servers({})));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setChecking(false);
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
        you approve it (keel mcp approve --project DIR). Switched-off tools leave the tool list from the next
        turn.
      </p>
      <button type="button" onClick={() => void check()} disabled={checking}>
        {checking ? 'Starting servers…' : view ? 'Check again' : 'Check servers'}
      </button>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {view && view.servers.length === 0 ? <p>No MCP servers are configured.</p> : null}
      {view?.servers.map((server) => (
        <article key={server.name} className="mcp-server" aria-label={`MCP server ${server.name}`}>
          <h3>
            {server.name}{' '}
            <span className={`tag ${server.state === 'ready' ? 'tag-ok' : 'tag-warning'}`}>
              {server.state}
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
      ))}
    </section>
  );
}

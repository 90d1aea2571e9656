import { useEffect, useState, type JSX } from 'react';
import type { ChannelInput, ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type Configured = ChannelOutput<'mcp.configured'>;
type Server = Configured['servers'][number];
type Fields = ChannelInput<'mcp.saveServer'>['fields'];

/** The form's text: one entry per line where the CLI takes a repeated flag. */
type Draft = {
  name: string;
  transport: 'stdio' | 'http';
  url: string;
  command: string;
  env: string;
  headers: string;
  allowHosts: string;
  writeProject: boolean;
};

const EMPTY: Draft = {
  name: '',
  transport: 'stdio',
  url: '',
  command: '',
  env: '',
  headers: '',
  allowHosts: '',
  writeProject: false,
};

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

function draftOf(server: Server): Draft {
  const f = server.fields;
  return {
    name: server.name,
    transport: server.transport,
    url: f.url ?? '',
    command: (f.command ?? []).join('\n'),
    env: (f.env ?? []).join('\n'),
    headers: (f.headers ?? []).join('\n'),
    allowHosts: (f.allowHosts ?? []).join('\n'),
    writeProject: f.writeProject === true,
  };
}

function fieldsOf(draft: Draft): Fields {
  return draft.transport === 'http'
    ? { url: draft.url.trim(), headers: lines(draft.headers) }
    : {
        command: lines(draft.command),
        env: lines(draft.env),
        allowHosts: lines(draft.allowHosts),
        writeProject: draft.writeProject,
      };
}

const SIGN_IN_WORDS: Record<NonNullable<Server['signIn']>, { text: string; ok: boolean }> = {
  signed_in: { text: 'signed in', ok: true },
  signed_out: { text: 'not signed in', ok: false },
  expired: { text: 'sign-in expired', ok: false },
  revoked: { text: 'sign-in revoked', ok: false },
};

/** A sign-in in progress: its URL (shown under `keel serve`; the app opened the browser with it). */
type Pending = { name: string; url?: string; opened: boolean };

/**
 * Issue 33 (#37 item 6): the settings' MCP servers added, edited and removed where they are shown, with the
 * validation and words of `keel mcp add` (the core's one rule), and each HTTP server's sign-in (signed in,
 * not signed in, expired, revoked) with Sign in / Sign out. Nothing here starts a server: "Check servers"
 * above does.
 */
export function McpServerEditor(): JSX.Element {
  const [configured, setConfigured] = useState<Configured | undefined>();
  const [draft, setDraft] = useState<Draft | undefined>();
  const [replacing, setReplacing] = useState<string | undefined>();
  const [removing, setRemoving] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending | undefined>();
  const [authHosts, setAuthHosts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    call(keel().mcp.configured({}))
      .then((result) => live && setConfigured(result))
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, []);

  const run = async (step: () => Promise<Configured>, after?: () => void) => {
    setBusy(true);
    setError(undefined);
    try {
      setConfigured(await step());
      after?.();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const save = (current: Draft) =>
    run(
      () =>
        call(
          keel().mcp.saveServer({
            name: current.name.trim(),
            ...(replacing !== undefined ? { replacing } : {}),
            fields: fieldsOf(current),
          }),
        ),
      () => {
        setDraft(undefined);
        setReplacing(undefined);
      },
    );

  const signIn = async (name: string) => {
    setError(undefined);
    try {
      const allowHosts = lines((authHosts[name] ?? '').replaceAll(',', '\n'));
      const started = await call(keel().mcp.signIn({ name, allowHosts }));
      setPending({ name, ...(started.url ? { url: started.url } : {}), opened: started.opened });
      setConfigured(await call(keel().mcp.signInWait({ name })));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setPending(undefined);
    }
  };

  const set = (change: Partial<Draft>) =>
    setDraft((current) => (current ? { ...current, ...change } : current));

  return (
    <section className="mcp-editor" aria-labelledby="mcp-editor-title">
      <h3 id="mcp-editor-title">Servers in your settings</h3>
      <p className="hint">
        Servers in your settings run for every project, inside the box. A URL server that asks for OAuth is
        signed in here (or with keel mcp login NAME).
        {configured ? ` Sign-in tokens are kept ${configured.tokenStorage}.` : ''}
      </p>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {configured && configured.servers.length === 0 ? <p>No servers in your settings.</p> : null}
      <ul className="mcp-configured">
        {configured?.servers.map((server) => {
          const state = server.signIn ? SIGN_IN_WORDS[server.signIn] : undefined;
          const waiting = pending?.name === server.name;
          return (
            <li key={server.name} aria-label={`Configured MCP server ${server.name}`}>
              <strong>{server.name}</strong>{' '}
              <code>{server.fields.url ?? (server.fields.command ?? []).join(' ')}</code>{' '}
              {state ? (
                <span className={`tag ${state.ok ? 'tag-ok' : 'tag-warning'}`}>{state.text}</span>
              ) : null}{' '}
              <button
                type="button"
                disabled={busy}
                onClick={() => {
                  setReplacing(server.name);
                  setDraft(draftOf(server));
                }}
              >
                Edit
              </button>{' '}
              {removing === server.name ? (
                <>
                  <span>Remove {server.name} from your settings?</span>{' '}
                  <button
                    type="button"
                    disabled={busy}
                    onClick={() =>
                      void run(
                        () => call(keel().mcp.removeServer({ name: server.name })),
                        () => setRemoving(undefined),
                      )
                    }
                  >
                    Yes, remove
                  </button>{' '}
                  <button type="button" onClick={() => setRemoving(undefined)}>
                    Keep
                  </button>
                </>
              ) : (
                <button type="button" disabled={busy} onClick={() => setRemoving(server.name)}>
                  Remove
                </button>
              )}
              {server.transport === 'http' ? (
                <div className="mcp-sign-in">
                  {server.signIn === 'signed_in' ? (
                    <button
                      type="button"
                      disabled={busy || waiting}
                      onClick={() => void run(() => call(keel().mcp.signOut({ name: server.name })))}
                    >
                      Sign out
                    </button>
                  ) : (
                    <>
                      <label>
                        Authorization server hosts{' '}
                        <input
                          aria-label={`Authorization server hosts for ${server.name}`}
                          placeholder="auth.example.com (if not the server's own)"
                          value={authHosts[server.name] ?? ''}
                          onChange={(event) =>
                            setAuthHosts((current) => ({ ...current, [server.name]: event.target.value }))
                          }
                        />
                      </label>{' '}
                      <button
                        type="button"
                        disabled={busy || pending !== undefined}
                        onClick={() => void signIn(server.name)}
                      >
                        {waiting ? 'Waiting for the browser…' : 'Sign in'}
                      </button>
                    </>
                  )}
                  {waiting && pending.url ? (
                    <p className="hint" role="status">
                      {pending.opened ? 'Your browser was opened to sign in. ' : ''}Open this link to sign in
                      to {server.name}:{' '}
                      <a href={pending.url} target="_blank" rel="noreferrer noopener">
                        {pending.url}
                      </a>
                    </p>
                  ) : null}
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
      {draft === undefined ? (
        <button
          type="button"
          disabled={busy}
          onClick={() => {
            setReplacing(undefined);
            setDraft(EMPTY);
          }}
        >
          Add server
        </button>
      ) : (
        <form
          className="mcp-server-form"
          aria-label={replacing ? `Edit MCP server ${replacing}` : 'Add MCP server'}
          onSubmit={(event) => {
            event.preventDefault();
            void save(draft);
          }}
        >
          <label>
            Name{' '}
            <input
              aria-label="Server name"
              value={draft.name}
              onChange={(e) => set({ name: e.target.value })}
            />
          </label>
          <fieldset>
            <legend>Runs as</legend>
            <label>
              <input
                type="radio"
                name="mcp-transport"
                checked={draft.transport === 'stdio'}
                onChange={() => set({ transport: 'stdio' })}
              />{' '}
              a command (stdio)
            </label>{' '}
            <label>
              <input
                type="radio"
                name="mcp-transport"
                checked={draft.transport === 'http'}
                onChange={() => set({ transport: 'http' })}
              />{' '}
              a URL (Streamable HTTP)
            </label>
          </fieldset>
          {draft.transport === 'http' ? (
            <>
              <label>
                URL{' '}
                <input
                  aria-label="Server URL"
                  value={draft.url}
                  onChange={(e) => set({ url: e.target.value })}
                />
              </label>
              <label>
                Headers (one “Name: value” per line)
                <textarea
                  aria-label="Headers"
                  value={draft.headers}
                  onChange={(e) => set({ headers: e.target.value })}
                />
              </label>
            </>
          ) : (
            <>
              <label>
                Command (the program, then one argument per line)
                <textarea
                  aria-label="Command"
                  value={draft.command}
                  onChange={(e) => set({ command: e.target.value })}
                />
              </label>
              <label>
                Environment (one NAME=VALUE per line, taken literally)
                <textarea
                  aria-label="Environment"
                  value={draft.env}
                  onChange={(e) => set({ env: e.target.value })}
                />
              </label>
              <label>
                Hosts it may reach when a session allows them (one per line)
                <textarea
                  aria-label="Allowed hosts"
                  value={draft.allowHosts}
                  onChange={(e) => set({ allowHosts: e.target.value })}
                />
              </label>
              <label>
                <input
                  type="checkbox"
                  checked={draft.writeProject}
                  onChange={(e) => set({ writeProject: e.target.checked })}
                />{' '}
                Let it write the project folder (read-only by default)
              </label>
            </>
          )}
          <div className="form-actions">
            <button type="submit" disabled={busy}>
              {busy ? 'Saving…' : 'Save server'}
            </button>{' '}
            <button
              type="button"
              onClick={() => {
                setDraft(undefined);
                setReplacing(undefined);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

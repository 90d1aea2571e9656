import { useEffect, useState, type JSX } from 'react';
import { onServeConnection, serveConnection, type ServeConnection } from '../../bridge/connection.js';
import './serveConnection.css';

/**
 * Issue #37: under `keel serve`, what the page's link to the server is doing and what to do about it: a drop
 * (reconnecting by itself), a server that is not running at the page's address (start it again: it serves
 * the same URL), one that refuses the page's token (open the URL it printed), and a server that is back
 * (reload to see what changed meanwhile). Renders nothing while all is well.
 */
export function ServeConnectionBanner(): JSX.Element | null {
  const [state, setState] = useState<ServeConnection>(serveConnection);
  useEffect(() => onServeConnection(setState), []);
  if (state.kind === 'open' && !state.restored) return null;
  const reload = (
    <button type="button" className="link-button" onClick={() => window.location.reload()}>
      Reload
    </button>
  );
  return (
    <div className="serve-connection" role="alert" aria-label="Connection to keel serve">
      {state.kind === 'open' ? (
        <p>
          Connected to <code>keel serve</code> again. {reload} to see what changed while it was away.
        </p>
      ) : state.kind === 'lost' ? (
        <p>The connection to keel serve dropped; reconnecting…</p>
      ) : state.kind === 'unreachable' ? (
        <p>
          <code>keel serve</code> is not running at <code>{state.address}</code>. Start it again in a terminal
          with <code>keel serve</code>: it serves the same address and token, and this page reconnects by
          itself. If it says its port was taken, open the new URL it prints.
        </p>
      ) : (
        <p>
          <code>keel serve</code> at <code>{state.address}</code> no longer takes this page&apos;s token (it
          was started with <code>--new-token</code>). Open the URL it printed in its terminal (
          <code>{state.address}?token=…</code>).
        </p>
      )}
    </div>
  );
}

import type { JSX } from 'react';
import { useApp } from '../../appContext.js';
import { LoadingState } from '../../components/States.js';

const KIND_LABELS = {
  bwrap: 'bubblewrap (Linux namespaces)',
  'sandbox-exec': 'sandbox-exec (macOS Seatbelt)',
  none: 'none',
} as const;

/** What confines commands on this machine, and why (app.info). */
export function SandboxStatus(): JSX.Element {
  const { info } = useApp();
  return (
    <section className="sandbox-status" aria-labelledby="sandbox-title">
      <h2 id="sandbox-title">Sandbox</h2>
      {!info ? (
        <LoadingState label="Checking the sandbox…" />
      ) : (
        <>
          <p>
            <span className={`tag ${info.sandbox.kind === 'none' ? 'tag-warning' : 'tag-ok'}`}>
              {info.sandbox.kind === 'none' ? 'not confined' : 'confined'}
            </span>{' '}
            Commands run under <strong>{KIND_LABELS[info.sandbox.kind]}</strong>
            {info.sandbox.version ? ` ${info.sandbox.version}` : ''}.
          </p>
          <p className="hint">{info.sandbox.reason}</p>
          <dl className="info-list">
            <dt>Keel</dt>
            <dd>
              {info.version} ({info.mode === 'serve' ? 'keel serve in a browser' : 'desktop app'},{' '}
              {info.platform})
            </dd>
            <dt>Home</dt>
            <dd>
              <code>{info.home}</code>
            </dd>
          </dl>
        </>
      )}
    </section>
  );
}

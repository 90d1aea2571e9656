import { useEffect, useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useApp } from '../../appContext.js';

type Report = ChannelOutput<'checkouts.storage'>;
type KindReport = ChannelOutput<'checkouts.kind'>;

const KINDS: readonly { value: KindReport['setting']; label: string }[] = [
  { value: 'auto', label: 'Automatic' },
  { value: 'copy', label: 'Full copy' },
  { value: 'view', label: 'Copy-on-write view' },
];

/**
 * What new sessions' checkouts are (issue 36: settings.json `checkouts.kind`), saved as it is chosen: the three
 * choices, what this machine supports (the overlay probe's sentence) and the kind new sessions get, said in words.
 * The App's settings are read again after a change, so a form saved later does not send the old choice back.
 */
function CheckoutKind(): JSX.Element {
  const { reloadSettings } = useApp();
  const [report, setReport] = useState<KindReport | undefined>();
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    call(keel().checkouts.kind({}))
      .then(setReport)
      .catch((failure: unknown) => setError(describeError(failure)));
  }, []);

  const choose = async (kind: KindReport['setting']) => {
    setSaving(true);
    setError(undefined);
    try {
      setReport(await call(keel().checkouts.setKind({ kind })));
      reloadSettings();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setSaving(false);
    }
  };

  return (
    <fieldset className="checkout-kind" disabled={report === undefined || saving}>
      <legend>New checkouts</legend>
      {KINDS.map((kind) => (
        <label key={kind.value}>
          <input
            type="radio"
            name="checkout-kind"
            value={kind.value}
            checked={report?.setting === kind.value}
            onChange={() => void choose(kind.value)}
          />{' '}
          {kind.label}
        </label>
      ))}
      {report ? (
        <>
          <p aria-label="This machine">
            This machine: {report.support.available ? 'copy-on-write views work' : 'no copy-on-write views'} (
            {report.support.reason}).
          </p>
          <p role="status" aria-label="New sessions get">
            {report.explanation}
          </p>
        </>
      ) : null}
      <p className="hint">
        A full copy costs the project’s size per session; a view stores only what the session changed. The
        choice applies to new sessions only: a session’s existing checkout keeps its kind.
      </p>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Settings → Checkout storage (issue 36): what the sessions' checkouts of their projects take on disk, the
 * bound (settings.json `checkouts.storageLimitMB`), and a button reclaiming idle ones (as `keel gc`): a
 * reclaimed checkout is made again by its session's next turn; one with uncommitted changes is kept.
 */
export function CheckoutStorage(): JSX.Element {
  const [report, setReport] = useState<Report | undefined>();
  const [collected, setCollected] = useState<Report | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    call(keel().checkouts.storage({}))
      .then(setReport)
      .catch((failure: unknown) => setError(describeError(failure)));
  }, []);

  const collect = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setCollected(await call(keel().checkouts.collect({})));
      setReport(await call(keel().checkouts.storage({})));
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const kept = collected?.entries.filter((entry) => entry.action === 'kept' && entry.reason) ?? [];
  return (
    <section className="checkout-storage" aria-labelledby="checkout-storage-title">
      <h2 id="checkout-storage-title">Checkout storage</h2>
      <p className="hint">
        Each session works on its own checkout of its project. Checkouts of idle sessions are reclaimed when
        they pass the bound, and made again when the session continues.
      </p>
      <CheckoutKind />
      {report ? (
        <p aria-label="Checkout storage use">
          {report.entries.length} checkouts, {mb(report.totalBytes)} of {mb(report.limitBytes)}
        </p>
      ) : null}
      <button type="button" onClick={() => void collect()} disabled={busy}>
        {busy ? 'Reclaiming…' : 'Reclaim idle checkouts'}
      </button>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {collected ? (
        <div role="status" aria-label="Checkouts reclaimed">
          <p>
            Reclaimed {collected.entries.filter((entry) => entry.action === 'reclaimed').length} checkouts (
            {mb(collected.reclaimedBytes)}).
          </p>
          {kept.length > 0 ? (
            <ul>
              {kept.map((entry) => (
                <li key={`${entry.sessionId}/${entry.dir}`}>
                  <code>{entry.sessionId}</code> kept: {entry.reason}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

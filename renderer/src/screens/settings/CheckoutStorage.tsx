import { useEffect, useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';

type Report = ChannelOutput<'checkouts.storage'>;

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

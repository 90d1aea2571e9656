import { useEffect, useState, type FormEvent, type JSX } from 'react';
import type { ChannelOutput, TopicPayload } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useSubscription } from '../../api/useSubscription.js';
import { useApp } from '../../appContext.js';
import { RecentProjects } from '../newSession/RecentProjects.js';

type Suggestion = ChannelOutput<'models.localMachine'>;
type Progress = TopicPayload<'models.localProgress'>;
type Failure = Extract<Progress, { state: 'failed' }>;

const gb = (bytes: number): string => `${(bytes / 1e9).toFixed(1)} GB`;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** What the user can do about a failed download, in the words of its button and hint. */
const WAY_OUT: Record<Failure['kind'], { hint: string; retry: string }> = {
  disk_full: { hint: 'Free some disk space; the part already downloaded is kept.', retry: 'Resume download' },
  wrong_hash: { hint: 'The file did not match its published hash and was deleted.', retry: 'Download again' },
  offline: { hint: 'Keel could not reach the download server. Check the connection.', retry: 'Try again' },
  http: { hint: 'The download server refused the file.', retry: 'Try again' },
  other: { hint: 'The download stopped.', retry: 'Try again' },
};

/** Bytes, speed and time left of a running download, in one line. */
function progressText(progress: Extract<Progress, { state: 'running' }>): string {
  const left = progress.secondsLeft === undefined ? '' : `, ${Math.ceil(progress.secondsLeft)} s left`;
  const of = progress.total ? ` of ${mb(progress.total)}` : '';
  return `${mb(progress.received)}${of} at ${mb(progress.bytesPerSecond)}/s${left}`;
}

/**
 * First run's "Use a local model" (issue 34): the model suggested for this machine with its download size first,
 * then its license and why it fits; Download (progress, cancel, a failure with its way out); then a project
 * folder and "Start a session", which creates a session pinned to the downloaded file and its SHA-256 and makes
 * the model the default for new sessions.
 */
export function LocalModelCard(): JSX.Element {
  const { navigate, info, settings, applySettings } = useApp();
  const [suggestion, setSuggestion] = useState<Suggestion | undefined>();
  const [progress, setProgress] = useState<Progress | undefined>();
  const [folder, setFolder] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const model = suggestion?.suggested;
  const downloaded = model?.downloaded === true || progress?.state === 'done';

  useEffect(() => {
    let live = true;
    call(keel().models.localMachine())
      .then((value) => live && setSuggestion(value))
      .catch((failure: unknown) => live && setError(describeError(failure)));
    return () => {
      live = false;
    };
  }, []);

  useSubscription('models.localProgress', (payload) => {
    if (payload.id === model?.id) setProgress(payload);
  });

  const download = async () => {
    if (!model) return;
    setError(undefined);
    setProgress({ id: model.id, state: 'running', received: 0, bytesPerSecond: 0 });
    try {
      await call(keel().models.localPull({ id: model.id }));
    } catch (failure) {
      setProgress(undefined);
      setError(describeError(failure));
    }
  };

  const cancel = async () => {
    if (model) await call(keel().models.localCancel({ id: model.id })).catch(() => undefined);
  };

  const start = async (event: FormEvent) => {
    event.preventDefault();
    if (!model) return;
    setError(undefined);
    setBusy(true);
    try {
      // keel serve resolves (and checks) a typed path; the app's dialog gave a real one already.
      const projectFolder =
        info?.mode === 'electron'
          ? folder.trim()
          : ((await call(keel().projects.openFolder({ path: folder.trim() }))).folder ?? folder.trim());
      const created = await call(
        keel().sessions.create({ projectFolder, provider: 'local', model: model.id, policy: 'ask' }),
      );
      // The local model becomes the default provider: first run is over, and the new-session dialog starts on it.
      if (settings) {
        const current = settings.settings;
        applySettings(
          await call(
            keel().settings.set({
              settings: { ...current, defaults: { ...current.defaults, provider: 'local', model: model.id } },
            }),
          ),
        );
      }
      navigate({ screen: 'session', sessionId: created.session.id });
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const browse = async () => {
    try {
      const picked = await call(keel().projects.openFolder(folder.trim() ? { path: folder.trim() } : {}));
      if (picked.folder) setFolder(picked.folder);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  return (
    <article className="card" aria-labelledby="local-model-title">
      <h2 id="local-model-title">Use a local model</h2>
      {!suggestion && !error ? (
        <p className="hint" role="status">
          Looking at this machine…
        </p>
      ) : null}
      {model && suggestion ? (
        <>
          <p className="local-model-size" data-testid="local-model-size">
            <strong>{gb(model.approxBytes)} download</strong>, once; then Keel runs it on this computer with
            nothing else to install, and nothing leaves it.
          </p>
          <p>
            <strong>{model.name}</strong> · {model.license}
          </p>
          <p className="hint" data-testid="local-model-why">
            Suggested for this machine: {suggestion.why}.
          </p>
        </>
      ) : null}
      {model && !downloaded && progress?.state !== 'running' ? (
        <button type="button" className="button-primary" onClick={() => void download()}>
          {progress?.state === 'failed' ? WAY_OUT[progress.kind].retry : `Download ${gb(model.approxBytes)}`}
        </button>
      ) : null}
      {progress?.state === 'running' ? (
        <>
          <progress
            aria-label="Download progress"
            max={progress.total ?? 1}
            value={progress.total ? progress.received : 0}
          />
          <p className="hint" role="status">
            {progressText(progress)}
          </p>
          <button type="button" className="button-secondary" onClick={() => void cancel()}>
            Cancel download
          </button>
        </>
      ) : null}
      {progress?.state === 'cancelled' ? (
        <p className="hint" role="status">
          Download stopped; the part downloaded is kept, so Download resumes it.
        </p>
      ) : null}
      {progress?.state === 'failed' ? (
        <p className="form-error" role="alert">
          {WAY_OUT[progress.kind].hint} ({progress.message})
        </p>
      ) : null}
      {model && downloaded ? (
        <form className="form" onSubmit={(event) => void start(event)}>
          <p role="status">{model.name} is downloaded.</p>
          <div className="field">
            <label htmlFor="local-model-folder">Project folder</label>
            <div className="field-row">
              <input
                id="local-model-folder"
                value={folder}
                onChange={(event) => setFolder(event.target.value)}
                placeholder="/home/you/projects/app"
                spellCheck={false}
                required
              />
              {info?.mode === 'electron' ? (
                <button type="button" className="button-secondary" onClick={() => void browse()}>
                  Choose…
                </button>
              ) : null}
            </div>
            <RecentProjects onPick={setFolder} />
          </div>
          <button type="submit" className="button-primary" disabled={busy}>
            Start a session
          </button>
        </form>
      ) : null}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </article>
  );
}

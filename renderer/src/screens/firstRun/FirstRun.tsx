import { useState, type JSX } from 'react';
import type { ChannelOutput } from '../../../../main/ipc/contract.js';
import { call, describeError } from '../../api/call.js';
import { keel } from '../../api/keel.js';
import { useApp } from '../../appContext.js';
import { useCatalogue } from '../newSession/useCatalogue.js';
import { PROVIDERS } from '../settings/providers.js';
import { LocalModelCard } from './LocalModelCard.js';

type LocalServer = ChannelOutput<'providers.detectLocal'>['servers'][number];

/**
 * First run with no provider: a local model Keel downloads and runs itself (issue 34), a local OpenAI-compatible
 * server (Ollama, LM Studio) offered when one answers, or a hosted provider's key.
 */
export function FirstRun(): JSX.Element {
  const { settings, navigate, applySettings, openNewSession } = useApp();
  const [servers, setServers] = useState<LocalServer[] | undefined>();
  const [detecting, setDetecting] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const suggested = Object.entries(useCatalogue().data?.suggested ?? {});

  const detect = async () => {
    setDetecting(true);
    setError(undefined);
    try {
      setServers((await call(keel().providers.detectLocal())).servers);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setDetecting(false);
    }
  };

  const use = async (server: LocalServer, model: string) => {
    if (!settings) return;
    setError(undefined);
    const current = settings.settings;
    try {
      const view = await call(
        keel().settings.set({
          settings: {
            ...current,
            defaults: { ...current.defaults, provider: 'openai-compatible', baseUrl: server.baseUrl, model },
            providers: { ...current.providers, 'openai-compatible': { baseUrl: server.baseUrl } },
          },
        }),
      );
      // With a provider configured, first run is over: the next step is a session on this model.
      applySettings(view);
      openNewSession();
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  return (
    <section className="first-run" aria-labelledby="first-run-title">
      <h1 id="first-run-title">Welcome to Keel</h1>
      <p className="lead">
        Keel runs coding agents on your project folders. Every step is recorded, so a session can be stopped,
        resumed and inspected. First, connect a model.
      </p>
      <div className="first-run-options">
        <LocalModelCard />
        <article className="card">
          <h2>Use Ollama or LM Studio</h2>
          <p>
            Keel works with any OpenAI-compatible server on this machine, such as Ollama (port 11434) or LM
            Studio (port 1234). Nothing leaves your computer.
          </p>
          <button type="button" className="button-primary" onClick={() => void detect()} disabled={detecting}>
            {detecting ? 'Looking…' : 'Look for a local server'}
          </button>
          {servers && servers.length === 0 ? (
            <p className="hint" role="status">
              No local server answered on 127.0.0.1:11434 or :1234. Start Ollama (<code>ollama serve</code>)
              or LM Studio’s server, then look again.
            </p>
          ) : null}
          {servers && servers.length > 0 ? (
            <ul className="server-list" aria-label="Local servers found">
              {servers.map((server) => (
                <li key={server.baseUrl}>
                  <strong>{server.name}</strong> <code>{server.baseUrl}</code>
                  {server.models.length === 0 ? (
                    <p className="hint">It answered but lists no models: pull one first.</p>
                  ) : (
                    <div className="chips">
                      {server.models.slice(0, 8).map((model) => (
                        <button
                          key={model}
                          type="button"
                          className="chip"
                          onClick={() => void use(server, model)}
                          aria-label={`Use ${model} on ${server.name}`}
                        >
                          Use {model}
                        </button>
                      ))}
                    </div>
                  )}
                </li>
              ))}
            </ul>
          ) : null}
        </article>
        <article className="card">
          <h2>Use a hosted provider</h2>
          <p>
            Add an Anthropic or OpenAI API key in Settings.{' '}
            {settings?.keyStorage === 'environment'
              ? 'Keys are read from ANTHROPIC_API_KEY or OPENAI_API_KEY when Keel starts.'
              : settings?.keyStorage === 'file'
                ? 'keel serve keeps a key saved there encrypted in its home, across restarts (or reads ANTHROPIC_API_KEY / OPENAI_API_KEY); it is never shown again.'
                : 'Keys are stored in your system keychain and never shown again.'}
          </p>
          {suggested.length > 0 ? (
            <p className="hint" data-testid="suggested-models">
              A good first model:{' '}
              {suggested.map(([kind, id], index) => (
                <span key={kind}>
                  {index > 0 ? ', ' : ''}
                  <code>{id}</code> ({PROVIDERS.find((entry) => entry.kind === kind)?.label ?? kind})
                </span>
              ))}
              . Older models are marked legacy or with their retirement day when you pick one.
            </p>
          ) : null}
          <button type="button" className="button-secondary" onClick={() => navigate({ screen: 'settings' })}>
            Open settings
          </button>
        </article>
      </div>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}

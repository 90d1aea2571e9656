import type { JSX } from 'react';
import type { ProviderKind } from '../../api/types.js';
import type { pinNote } from './modelLifecycle.js';

/** The fields under a model choice that both the New session dialog and the model switch show. */
export type ModelFieldsProps = {
  /** Prefix of the inputs' ids (`ns`, `ms`): two forms may be on screen at once. */
  idPrefix: string;
  note: ReturnType<typeof pinNote>;
  provider: ProviderKind;
  baseUrl: string;
  onBaseUrl: (value: string) => void;
  needsWindow: boolean;
  contextWindow: string;
  onContextWindow: (value: string) => void;
  /** Said under the window field (why Keel asks for it). */
  windowHint?: string;
};

/** The chosen model's lifecycle note, its base URL (local servers, or one already set) and an unknown model's window. */
export function ModelFields(props: ModelFieldsProps): JSX.Element {
  const { idPrefix, note, provider, baseUrl, needsWindow, contextWindow, windowHint } = props;
  return (
    <>
      {note ? (
        <p className={`model-note${note.tone === 'danger' ? ' model-note-danger' : ''}`} role="status">
          {note.text}
        </p>
      ) : null}
      {provider === 'openai-compatible' || baseUrl ? (
        <div className="field">
          <label htmlFor={`${idPrefix}-base-url`}>Base URL</label>
          <input
            id={`${idPrefix}-base-url`}
            type="url"
            value={baseUrl}
            onChange={(event) => props.onBaseUrl(event.target.value)}
            placeholder="http://127.0.0.1:11434/v1"
            spellCheck={false}
          />
        </div>
      ) : null}
      {needsWindow ? (
        <div className="field">
          <label htmlFor={`${idPrefix}-window`}>Context window (tokens)</label>
          <input
            id={`${idPrefix}-window`}
            type="number"
            min={1}
            step={1}
            value={contextWindow}
            onChange={(event) => props.onContextWindow(event.target.value)}
            placeholder="32768"
          />
          {windowHint ? <p className="hint">{windowHint}</p> : null}
        </div>
      ) : null}
    </>
  );
}

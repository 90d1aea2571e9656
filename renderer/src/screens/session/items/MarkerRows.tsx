import type { JSX } from 'react';
import type { UnusualStop } from '../../../../../main/ipc/contract.js';
import type { EventOf } from '../../../api/types.js';
import { Markdown } from '../../../components/Markdown.js';
import { formatBytes, formatClock, formatDateTime, formatTokens } from '../../../lib/format.js';
import { useInspectorLink } from '../../inspector/inspectorLink.js';

/** The first row: where and with what the session started. */
export function SessionStartRow({ event }: { event: EventOf<'session_created'> }): JSX.Element {
  return (
    <div className="marker marker-start">
      Session started {formatDateTime(event.at)} in <code>{event.projectFolder}</code> with{' '}
      <strong>
        {event.provider}:{event.model}
      </strong>{' '}
      · policy {event.policy} · {event.toolMode} tools
      {event.networkAllow && event.networkAllow.length > 0
        ? ` · network: ${event.networkAllow.join(', ')}`
        : ' · no network'}
    </div>
  );
}

/** A compaction marker; its element id (`compaction-<seq>`) is the link target of the compaction inspector. */
export function CompactionMarker({ event }: { event: EventOf<'compaction'> }): JSX.Element {
  const range =
    event.fromSeq !== undefined
      ? `events ${event.fromSeq}–${event.through}`
      : `events up to ${event.through}`;
  const tokens =
    event.tokensBefore !== undefined && event.tokensAfter !== undefined
      ? ` (${formatTokens(event.tokensBefore)} → ${formatTokens(event.tokensAfter)} tokens)`
      : '';
  const inspect = useInspectorLink();
  return (
    <div className="marker marker-compaction" id={`compaction-${event.seq}`} data-compaction-seq={event.seq}>
      {inspect ? (
        <button type="button" className="link-button marker-inspect" onClick={() => inspect(event.seq)}>
          Inspect
        </button>
      ) : null}
      <details>
        <summary>
          Context compacted: {range} summarized{tokens}
          {event.supersedes !== undefined ? ` · re-runs compaction ${event.supersedes}` : ''}
        </summary>
        <div className="compaction-summary">
          <Markdown text={event.summary} mode="deferred" />
        </div>
      </details>
    </div>
  );
}

/** A model switch: the pin (model and endpoint) every later request uses. */
export function ModelSwitchRow({ event }: { event: EventOf<'model_changed'> }): JSX.Element {
  return (
    <div className="marker marker-model">
      Model switched to{' '}
      <strong>
        {event.provider}:{event.model}
      </strong>
      {/* The endpoint too: a switch that only fixed the base URL says so. */}
      {event.baseUrl ? (
        <>
          {' '}
          at <code>{event.baseUrl}</code>
        </>
      ) : null}{' '}
      ({formatTokens(event.contextWindow)} window) · {formatClock(event.at)}
    </div>
  );
}

/**
 * The project instructions a turn loaded (AGENTS.md / CLAUDE.md files), or that they were removed: which files
 * the model is following from here on, each one the size cap cut marked as such.
 */
export function InstructionsMarker({ event }: { event: EventOf<'instructions_loaded'> }): JSX.Element {
  const cut = event.files.filter((file) => file.truncated).length;
  if (event.files.length === 0) {
    return (
      <div className="marker marker-instructions">
        Project instructions removed: the model follows none from here on · {formatClock(event.at)}
      </div>
    );
  }
  return (
    <div className="marker marker-instructions">
      <details>
        <summary>
          Project instructions loaded:{' '}
          {event.files.map((file, index) => (
            <span key={file.path}>
              {index > 0 ? ', ' : ''}
              <code>{file.path}</code>
            </span>
          ))}
          {cut > 0 ? ` · ${cut === 1 ? 'one file was' : `${cut} files were`} cut at the size cap` : ''} ·{' '}
          {formatClock(event.at)}
        </summary>
        <ul className="instructions-files" aria-label="Instruction files">
          {event.files.map((file) => (
            <li key={file.path}>
              <code>{file.path}</code> · {formatBytes(file.size)}
              {file.truncated
                ? file.content === ''
                  ? ' · not sent: the size cap was reached'
                  : ` · cut: the model got the first ${formatBytes(new TextEncoder().encode(file.content).length)}`
                : ''}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

/** What a recorded error's code means, in the user's terms (the code itself stays in the log and the trace). */
const ERROR_HEADINGS: Record<string, string> = {
  missing_key: 'No key for the provider',
  auth: 'The provider refused the key',
  rate_limited: 'The provider is limiting requests',
  quota: 'The provider account is out of quota',
  context_too_long: 'The conversation is too long for the model',
  server: 'The provider had a server error',
  network: 'Could not reach the provider',
  bad_request: 'The provider refused the request',
  not_found: 'The provider does not know this model or address',
  aborted: 'The request was stopped',
  bad_response: 'The provider sent a reply Keel could not read',
};

/** An error the turn recorded, with its message, headed by what its code means (never the code itself). */
export function ErrorRow({ message, code, at }: { message: string; code?: string; at: string }): JSX.Element {
  return (
    <div className="marker marker-error" role="note" data-code={code}>
      <strong>{(code && ERROR_HEADINGS[code]) ?? 'Something went wrong'}:</strong> {message}
      <time dateTime={at}> · {formatClock(at)}</time>
    </div>
  );
}

/** A reply that ended unusually (a refusal, a content filter, the output limit), said as the provider said it. */
export function StopRow({ stop, at }: { stop: UnusualStop; at: string }): JSX.Element {
  return (
    <div className={`marker marker-stop marker-stop-${stop.kind}`} role="note">
      {stop.message} <time dateTime={at}>· {formatClock(at)}</time>
    </div>
  );
}

/** Any other fact of the log, in one line. */
export function NoteRow({ text, at }: { text: string; at: string }): JSX.Element {
  return (
    <div className="marker marker-note">
      {text} <time dateTime={at}>· {formatClock(at)}</time>
    </div>
  );
}

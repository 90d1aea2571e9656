import { useState, type JSX, type ReactNode } from 'react';

/**
 * Where the conversation was rewound: the rows it set aside stay in the log and are shown here, folded; they
 * are rendered only once opened.
 */
export function RewoundMarker({
  toSeq,
  cause,
  count,
  renderSetAside,
}: {
  toSeq: number;
  cause?: 'refusal';
  count: number;
  renderSetAside: () => ReactNode;
}): JSX.Element {
  const [open, setOpen] = useState(false);
  return (
    <div className="marker marker-rewound" data-rewound-to={toSeq} data-cause={cause}>
      <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide' : 'Show'} the abandoned branch ({count} item{count === 1 ? '' : 's'})
      </button>
      {cause === 'refusal' ? (
        <span>
          {' '}
          · The provider declined this turn, so it is left out of the conversation (files it changed stay as
          they are); rephrase the request to go on
        </span>
      ) : (
        <span> · Rewound: the conversation continues from event {toSeq}</span>
      )}
      {open ? <div className="set-aside-rows">{renderSetAside()}</div> : null}
    </div>
  );
}

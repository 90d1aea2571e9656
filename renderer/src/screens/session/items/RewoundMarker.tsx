import { useState, type JSX, type ReactNode } from 'react';

/**
 * Where the conversation was rewound: the rows it set aside stay in the log and are shown here, folded; they
 * are rendered only once opened.
 */
export function RewoundMarker({
  toSeq,
  count,
  renderSetAside,
}: {
  toSeq: number;
  count: number;
  renderSetAside: () => ReactNode;
}): JSX.Element {
  const [open, setOpen] = useState(false);
  return (
    <div className="marker marker-rewound" data-rewound-to={toSeq}>
      <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide' : 'Show'} the abandoned branch ({count} item{count === 1 ? '' : 's'})
      </button>
      <span> · Rewound: the conversation continues from here</span>
      {open ? <div className="set-aside-rows">{renderSetAside()}</div> : null}
    </div>
  );
}
